#version 330
//#include common
#ifdef LOOK_WET
uniform float u_wet;  // 0 dry .. 1 soaked: darker ground that mirrors the sky at grazing angles
#endif
in vec3 v_world;
in vec3 v_normal;
in vec3 v_color;
out vec4 f_color;
void main() {
    vec3 col = v_color * shade(v_normal);
#ifdef LOOK_LAMPS
    if (u_lamp_count > 0) {
        col += v_color * lamp_light(v_world, v_normal);
    }
#endif
#ifdef LOOK_WET
    if (u_wet > 0.0 && v_normal.z > 0.5) {
        vec3 view = normalize(v_world - u_eye);
        float grazing = pow(1.0 - abs(view.z), 4.0);
        vec3 mirrored = sky_color(reflect(view, vec3(0.0, 0.0, 1.0)));
        col = mix(col * (1.0 - 0.45 * u_wet), mirrored, u_wet * (0.06 + 0.5 * grazing));
    }
#endif
    f_color = vec4(apply_fog(col, v_world), 1.0);
}
