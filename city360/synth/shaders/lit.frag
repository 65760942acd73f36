#version 330
//#include common
in vec3 v_world;
in vec3 v_normal;
in vec3 v_color;
out vec4 f_color;
void main() {
    f_color = vec4(apply_fog(v_color * shade(v_normal), v_world), 1.0);
}
