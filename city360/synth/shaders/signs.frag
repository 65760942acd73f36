#version 330
//#include common
uniform sampler2DArray u_signs;
in vec3 v_world;
in vec2 v_uv;
flat in float v_page;
out vec4 f_color;
void main() {
    // boards are lit from within (shop signs), so only haze changes them
    vec3 col = texture(u_signs, vec3(v_uv, v_page)).rgb;
    f_color = vec4(apply_fog(col, v_world), 1.0);
}
