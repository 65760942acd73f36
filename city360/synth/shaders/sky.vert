#version 330
// A full-screen triangle at the far plane; v_ndc is the fragment's normalised device coordinate.
// Drawn last with depth test <=, it colours only pixels no geometry covered.
out vec2 v_ndc;
void main() {
    vec2 pos = vec2(float((gl_VertexID & 1) << 2) - 1.0, float((gl_VertexID & 2) << 1) - 1.0);
    v_ndc = pos;
    gl_Position = vec4(pos, 1.0, 1.0);
}
