#version 330
// Resample six camera-aligned cube faces (packed 3 x 2 in u_faces) to an equirectangular image.
// Column u has longitude ((u + 0.5) / W) * 360 - 180 degrees from the heading, positive to the
// right; read-back row v has latitude 90 - ((v + 0.5) / H) * 180 (row 0 = straight up).
// Camera frame: x right, y forward, z up. Face order and axes must match render.py's _FACES
// (+X, -X, +Y, -Y, +Z, -Z, a face's right axis = forward x up, up = +Z for the four side
// faces, +Y for the top and bottom) and its CPU twin _remap_maps.
uniform sampler2D u_faces;
uniform vec2 u_size;          // output width, height (pixels)
uniform float u_face_px;      // face edge length (pixels)
out vec4 f_color;
const float PI = 3.14159265358979;
void main() {
    float lon = gl_FragCoord.x / u_size.x * 2.0 * PI - PI;  // from the forward axis
    float lat = 0.5 * PI - gl_FragCoord.y / u_size.y * PI;
    float c = cos(lat);
    vec3 d = vec3(c * sin(lon), c * cos(lon), sin(lat));
    vec3 a = abs(d);
    float face;
    vec2 st;  // face coordinates in [-1, 1]: along its right and up axes
    if (a.x >= a.y && a.x >= a.z) {
        face = d.x > 0.0 ? 0.0 : 1.0;
        st = vec2(d.x > 0.0 ? -d.y : d.y, d.z) / a.x;
    } else if (a.y >= a.z) {
        face = d.y > 0.0 ? 2.0 : 3.0;
        st = vec2(d.y > 0.0 ? d.x : -d.x, d.z) / a.y;
    } else {
        face = d.z > 0.0 ? 4.0 : 5.0;
        st = vec2(d.z > 0.0 ? -d.x : d.x, d.y) / a.z;
    }
    st = clamp(0.5 * st + 0.5, 0.5 / u_face_px, 1.0 - 0.5 / u_face_px);
    vec2 cell = vec2(mod(face, 3.0), floor(face / 3.0));
    f_color = vec4(textureLod(u_faces, (cell + st) / vec2(3.0, 2.0), 0.0).rgb, 1.0);
}
