#version 330
//#include common
uniform mat3 u_cam_to_world;  // columns: camera right, up, backward (-forward) in world axes
uniform vec2 u_tan_half;      // tan(half field of view) horizontally and vertically
in vec2 v_ndc;
out vec4 f_color;
void main() {
    vec3 eye_dir = vec3(v_ndc * u_tan_half, -1.0);
    f_color = vec4(sky_color(normalize(u_cam_to_world * eye_dir)), 1.0);
}
