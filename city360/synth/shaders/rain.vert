#version 330
// Rain streaks: world-space line segments around the camera (city360/synth/render.py).
uniform mat4 u_view_proj;
in vec3 in_pos;
in float in_alpha;
out vec3 v_world;
out float v_alpha;
void main() {
    v_world = in_pos;
    v_alpha = in_alpha;
    gl_Position = u_view_proj * vec4(in_pos, 1.0);
}
