#version 330
//#include common
uniform vec3 u_rain_color;
in vec3 v_world;
in float v_alpha;
out vec4 f_color;
void main() {
    f_color = vec4(apply_fog(u_rain_color, v_world), v_alpha);
}
