#version 330
uniform mat4 u_view_proj;
in vec3 in_pos;
in vec2 in_uv;
in float in_page;
out vec3 v_world;
out vec2 v_uv;
flat out float v_page;
void main() {
    v_world = in_pos;
    v_uv = in_uv;
    v_page = in_page;
    gl_Position = u_view_proj * vec4(in_pos, 1.0);
}
