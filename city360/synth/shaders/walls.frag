#version 330
//#include common
uniform sampler2D u_windows;  // 4 styles across; ground-floor tiles in the lower half
uniform vec2 u_bay;           // window bay width, storey height (metres)
#ifdef LOOK_WINDOW_GLOW
uniform float u_window_glow;  // brightness of lit windows (0: none lit)
uniform float u_window_lit_share;  // fraction of upper-floor windows lit (shopfronts: double)
#endif
in vec3 v_world;
in vec3 v_normal;
in vec2 v_wall;
in vec3 v_tint;
flat in float v_style;
out vec4 f_color;
void main() {
    vec2 uv = v_wall / u_bay;
    // stay half a texel inside the tile so bilinear filtering never reads the next style
    vec2 cell = clamp(fract(uv), 1.0 / 128.0, 127.0 / 128.0);
    float upper = uv.y >= 1.0 ? 0.5 : 0.0;
    vec2 tile = vec2((v_style + cell.x) * 0.25, upper + (1.0 - cell.y) * 0.5);
    // gradients of the continuous coordinate, so mip selection ignores the fract() seams
    vec4 texel = textureGrad(u_windows, tile, dFdx(uv) * vec2(0.25, 0.5), dFdy(uv) * vec2(0.25, 0.5));
    vec3 albedo = mix(texel.rgb, v_tint * texel.rgb, texel.a);
    vec3 col = albedo * shade(v_normal);
#ifdef LOOK_LAMPS
    if (u_lamp_count > 0) {
        col += albedo * lamp_light(v_world, v_normal);
    }
#endif
#ifdef LOOK_WINDOW_GLOW
    if (u_window_glow > 0.0) {
        // lit or dark per window bay, fixed by the bay and the building's tint (deterministic)
        vec2 bay = floor(uv) + v_tint.rg * 131.0 + v_style * 17.0;
        float pick = fract(sin(dot(bay, vec2(12.9898, 78.233))) * 43758.5453);
        float share = upper > 0.0 ? u_window_lit_share : min(1.0, 2.0 * u_window_lit_share);
        float lit = pick < share ? 1.0 : 0.0;
        col += (1.0 - texel.a) * lit * u_window_glow * vec3(1.0, 0.82, 0.55);
    }
#endif
    f_color = vec4(apply_fog(col, v_world), 1.0);
}
