// Shared by every scene shader: sky colour and aerial perspective (fog).
// World frame: x east, y north, z up, metres.
uniform vec3 u_sun;    // unit vector towards the sun
uniform vec3 u_eye;    // camera position

const vec3 SKY_ZENITH = vec3(0.30, 0.50, 0.82);
const vec3 SKY_HORIZON = vec3(0.80, 0.86, 0.93);
const vec3 GROUND_FAR = vec3(0.40, 0.39, 0.36);  // bare terrain, lit

vec3 sky_color(vec3 d) {
    float h = d.z;
    vec3 col = mix(SKY_HORIZON, SKY_ZENITH, pow(clamp(h, 0.0, 1.0), 0.55));
    if (h < 0.0) {
        // below the horizon: terrain, hazed towards the horizon like distant geometry
        col = mix(SKY_HORIZON, GROUND_FAR, clamp(-h * 12.0, 0.0, 1.0));
    }
    float facing = max(dot(d, u_sun), 0.0);
    col += vec3(1.0, 0.92, 0.75) * (0.35 * pow(facing, 64.0) + 0.5 * pow(facing, 800.0));
    if (facing > 0.99985) {
        col = vec3(1.0, 0.99, 0.94);
    }
    return clamp(col, 0.0, 1.0);
}

// Blend a lit surface colour towards the horizon haze with distance.
vec3 apply_fog(vec3 col, vec3 world) {
    float dist = length(world - u_eye);
    float haze = 1.0 - exp(-dist / 900.0);
    return mix(col, SKY_HORIZON, haze);
}

// Flat lighting: ambient sky light plus the sun on surfaces that face it.
float shade(vec3 n) {
    return 0.62 + 0.38 * max(dot(normalize(n), u_sun), 0.0);
}
