// Shared by every scene shader: sky colour, aerial perspective (fog) and lighting under the
// city's visual condition (city360/synth/looks.py sets every u_ value below from a Look; the
// day look's values are what these were as constants). World frame: x east, y north, z up, m.
// A look's optional parts (LOOK_LAMPS, LOOK_WET, LOOK_WINDOW_GLOW) are compiled in only when
// it uses them: llvmpipe runs both sides of a branch, even one on a uniform, so a day shader
// that merely skipped them at run time shaded 2.7x slower (issue 17 round three).
uniform vec3 u_sun;          // unit vector towards the sun
uniform vec3 u_eye;          // camera position
uniform vec3 u_sky_zenith;
uniform vec3 u_sky_horizon;
uniform vec3 u_ground_far;   // bare terrain below the horizon, lit
uniform vec3 u_fog_color;    // what distant geometry fades to
uniform float u_haze_m;      // distance over which 1 - 1/e of the fog colour is reached, m
uniform float u_ambient;     // light on a surface facing away from the sun
uniform float u_sun_gain;    // extra light on a surface facing the sun
uniform vec3 u_sun_color;    // glare around the sun
uniform float u_sun_glow;    // scale of that glare (0: none)
uniform float u_sun_disc;    // 1: draw the sun's disc
#ifdef LOOK_LAMPS
uniform int u_lamp_count;    // street lamps lighting this view (0: none)
uniform vec3 u_lamps[12];    // their positions (x, y, height), m
uniform vec3 u_lamp_light;   // lamp colour x gain
uniform float u_lamp_range_m;
#endif

vec3 sky_color(vec3 d) {
    float h = d.z;
    vec3 col = mix(u_sky_horizon, u_sky_zenith, pow(clamp(h, 0.0, 1.0), 0.55));
    if (h < 0.0) {
        // below the horizon: terrain, hazed towards the horizon like distant geometry
        col = mix(u_sky_horizon, u_ground_far, clamp(-h * 12.0, 0.0, 1.0));
    }
    float facing = max(dot(d, u_sun), 0.0);
    col += u_sun_color * (u_sun_glow * (0.35 * pow(facing, 64.0) + 0.5 * pow(facing, 800.0)));
    if (u_sun_disc > 0.5 && facing > 0.99985) {
        col = vec3(1.0, 0.99, 0.94);
    }
    return clamp(col, 0.0, 1.0);
}

// Blend a lit surface colour towards the fog colour with distance.
vec3 apply_fog(vec3 col, vec3 world) {
    float dist = length(world - u_eye);
    float haze = 1.0 - exp(-dist / u_haze_m);
    return mix(col, u_fog_color, haze);
}

// Flat lighting: ambient sky light plus the sun on surfaces that face it.
float shade(vec3 n) {
    return u_ambient + u_sun_gain * max(dot(normalize(n), u_sun), 0.0);
}

#ifdef LOOK_LAMPS
// Light from the nearest street lamps (only called when u_lamp_count > 0): a soft falloff
// 1 / (1 + (d / range)^2), brighter on surfaces that face the lamp.
vec3 lamp_light(vec3 world, vec3 n) {
    vec3 unit_n = normalize(n);
    float total = 0.0;
    for (int i = 0; i < u_lamp_count; ++i) {
        vec3 to_lamp = u_lamps[i] - world;
        float d2 = max(dot(to_lamp, to_lamp), 1e-4);
        float facing = max(dot(unit_n, to_lamp * inversesqrt(d2)), 0.0);
        total += (0.3 + 0.7 * facing) / (1.0 + d2 / (u_lamp_range_m * u_lamp_range_m));
    }
    return u_lamp_light * total;
}
#endif
