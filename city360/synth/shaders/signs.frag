#version 330
//#include common
uniform sampler2DArray u_signs;
uniform float u_sign_gain;  // boards are lit from within: their own brightness, not the sun's
in vec3 v_world;
in vec2 v_uv;
flat in float v_page;
out vec4 f_color;
void main() {
    vec3 col = texture(u_signs, vec3(v_uv, v_page)).rgb * u_sign_gain;
    f_color = vec4(apply_fog(col, v_world), 1.0);
}
