#version 330
// Flat-coloured, lit geometry: ground layers and street objects, people, vehicles as boxes.
uniform mat4 u_view_proj;
in vec3 in_pos;
in vec3 in_normal;
in vec3 in_color;
out vec3 v_world;
out vec3 v_normal;
out vec3 v_color;
void main() {
    v_world = in_pos;
    v_normal = in_normal;
    v_color = in_color;
    gl_Position = u_view_proj * vec4(in_pos, 1.0);
}
