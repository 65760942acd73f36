#version 330
// Resample six cube faces (packed 3 x 2 in u_faces) to an equirectangular image.
// Column u has longitude ((u + 0.5) / W) * 360 - 180 degrees from the heading, positive to the
// right; read-back row v has latitude 90 - ((v + 0.5) / H) * 180 (row 0 = straight up).
uniform sampler2D u_faces;
uniform vec2 u_size;          // output width, height (pixels)
uniform float u_heading;      // radians clockwise from north
uniform float u_face_px;      // face edge length (pixels)
uniform vec3 u_face_f[6];     // each face's forward, right and up axes (world)
uniform vec3 u_face_r[6];
uniform vec3 u_face_u[6];
out vec4 f_color;
const float PI = 3.14159265358979;
void main() {
    float lon = gl_FragCoord.x / u_size.x * 2.0 * PI - PI;
    float lat = 0.5 * PI - gl_FragCoord.y / u_size.y * PI;
    vec3 fwd = vec3(sin(u_heading), cos(u_heading), 0.0);
    vec3 right = vec3(cos(u_heading), -sin(u_heading), 0.0);
    vec3 d = cos(lat) * (sin(lon) * right + cos(lon) * fwd) + vec3(0.0, 0.0, sin(lat));
    int best = 0;
    float best_dot = -2.0;
    for (int i = 0; i < 6; i++) {
        float k = dot(d, u_face_f[i]);
        if (k > best_dot) { best_dot = k; best = i; }
    }
    vec2 st = 0.5 * (vec2(dot(d, u_face_r[best]), dot(d, u_face_u[best])) / best_dot + 1.0);
    st = clamp(st, 0.5 / u_face_px, 1.0 - 0.5 / u_face_px);
    vec2 uv = (vec2(float(best % 3), float(best / 3)) + st) / vec2(3.0, 2.0);
    f_color = vec4(texture(u_faces, uv).rgb, 1.0);
}
