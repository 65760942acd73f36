#version 330
uniform mat4 u_view_proj;
in vec3 in_pos;
in vec2 in_normal;
in float in_along;
in float in_height;
in vec3 in_tint;
in float in_style;
out vec3 v_world;
out vec3 v_normal;
out vec2 v_wall;   // metres along the footprint, metres above the ground
out vec3 v_tint;
flat out float v_style;
void main() {
    v_world = in_pos;
    v_normal = vec3(in_normal, 0.0);
    v_wall = vec2(in_along, in_height);
    v_tint = in_tint;
    v_style = in_style;
    gl_Position = u_view_proj * vec4(in_pos, 1.0);
}
