/* Pitched memory, arrays, texture and surface objects through the runtime's image extension
 * (vhsa's linear images; on vkfd ROCR's, which tiles arrays), every result checked against a
 * CPU reference:
 *   - hipMallocPitch (a pitch aligned to 256 bytes) with hipMemcpy2D both ways and a kernel
 *     writing through the pitch; hipMalloc3D with a kernel filling its slices;
 *   - arrays filled with hipMemcpy2DToArray and read by tex2D: float with point filtering and
 *     unnormalized coordinates (clamped outside); float with linear filtering, normalized
 *     coordinates and clamp, wrap and border addressing; uchar4 read as normalized floats; int;
 *   - tex1Dfetch on linear memory (a buffer image); a pitched 2D texture over hipMallocPitch
 *     memory;
 *   - a surface object written by surf2Dwrite and read back with hipMemcpy2DFromArray.
 * Linear filtering uses 8-bit fractional weights in hardware: a filtered result may differ from
 * the exact weights by 1/256 of the differences between the texels it mixes. */
#include "hip_test.h"

#include <math.h>
#include <string.h>

#include <vector>

__global__ void scale_through_pitch(float* p, size_t pitch, int w, int h) {
  int x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y;
  if (x >= w || y >= h) return;
  float* row = (float*)((char*)p + y * pitch);
  row[x] = row[x] * 2.0f + (float)(x + 1000 * y);
}

__global__ void fill_3d(hipPitchedPtr p, int w, int h, int d) {
  int x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y, z = blockIdx.z;
  if (x >= w || y >= h || z >= d) return;
  char* slice = (char*)p.ptr + (size_t)z * p.pitch * p.ysize;
  ((int*)(slice + y * p.pitch))[x] = x + 100 * y + 10000 * z;
}

/* Samples texel centres (x + 0.5, y + 0.5) of a w x h texture in unnormalized coordinates. */
template <typename T>
__global__ void read_texels(hipTextureObject_t t, T* out, int w, int h) {
  int x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y;
  if (x >= w || y >= h) return;
  out[y * w + x] = tex2D<T>(t, x + 0.5f, y + 0.5f);
}

/* Samples the coordinates (u[i], v[i]). */
__global__ void sample_at(hipTextureObject_t t, const float* u, const float* v, float* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = tex2D<float>(t, u[i], v[i]);
}

__global__ void fetch_1d(hipTextureObject_t t, float* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = tex1Dfetch<float>(t, i);
}

__global__ void write_surface(hipSurfaceObject_t s, int w, int h) {
  int x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y;
  if (x >= w || y >= h) return;
  surf2Dwrite<float>(1.5f * x - 0.25f * y, s, x * (int)sizeof(float), y);
}

static dim3 grid2(int w, int h) { return dim3((w + 63) / 64, h); }

static float texel_value(int x, int y) { return sinf(0.37f * x) * 5.0f + cosf(0.23f * y) * 3.0f + 0.125f * x; }

static void pitched_memory() {
  const int w = 37, h = 13;
  float* d;
  size_t pitch = 0;
  CHECK_HIP(hipMallocPitch((void**)&d, &pitch, w * sizeof(float), h));
  CHECK(pitch >= w * sizeof(float) && pitch % 256 == 0, "pitch %zu for rows of %zu bytes", pitch, w * sizeof(float));
  std::vector<float> host(w * h), back(w * h);
  for (int i = 0; i < w * h; i++) host[i] = (float)(i * 3 % 101);
  CHECK_HIP(hipMemcpy2D(d, pitch, host.data(), w * sizeof(float), w * sizeof(float), h, hipMemcpyHostToDevice));
  CHECK_HIP(hipMemcpy2D(back.data(), w * sizeof(float), d, pitch, w * sizeof(float), h, hipMemcpyDeviceToHost));
  for (int i = 0; i < w * h; i++) CHECK(back[i] == host[i], "2D round trip: element %d is %g, expected %g", i, back[i], host[i]);
  hipLaunchKernelGGL(scale_through_pitch, grid2(w, h), dim3(64), 0, 0, d, pitch, w, h);
  CHECK_HIP(hipGetLastError());
  CHECK_HIP(hipMemcpy2D(back.data(), w * sizeof(float), d, pitch, w * sizeof(float), h, hipMemcpyDeviceToHost));
  for (int y = 0; y < h; y++)
    for (int x = 0; x < w; x++) {
      float want = host[y * w + x] * 2.0f + (float)(x + 1000 * y);
      CHECK(back[y * w + x] == want, "kernel through the pitch: (%d, %d) is %g, expected %g", x, y, back[y * w + x], want);
    }
  CHECK_HIP(hipFree(d));
  printf("hipMallocPitch pitch %zu, hipMemcpy2D and a pitched kernel: ok\n", pitch);

  const int dw = 21, dh = 5, dd = 3;
  hipPitchedPtr p;
  CHECK_HIP(hipMalloc3D(&p, make_hipExtent(dw * sizeof(int), dh, dd)));
  CHECK(p.pitch >= dw * sizeof(int) && p.ysize == (size_t)dh, "pitch %zu ysize %zu", p.pitch, p.ysize);
  hipLaunchKernelGGL(fill_3d, dim3((dw + 63) / 64, dh, dd), dim3(64), 0, 0, p, dw, dh, dd);
  CHECK_HIP(hipGetLastError());
  std::vector<int> vol(dw * dh * dd);
  hipMemcpy3DParms m;
  memset(&m, 0, sizeof m);
  m.srcPtr = p;
  m.dstPtr = make_hipPitchedPtr(vol.data(), dw * sizeof(int), dw, dh);
  m.extent = make_hipExtent(dw * sizeof(int), dh, dd);
  m.kind = hipMemcpyDeviceToHost;
  CHECK_HIP(hipMemcpy3D(&m));
  for (int z = 0; z < dd; z++)
    for (int y = 0; y < dh; y++)
      for (int x = 0; x < dw; x++) {
        int got = vol[(z * dh + y) * dw + x];
        CHECK(got == x + 100 * y + 10000 * z, "hipMalloc3D (%d, %d, %d) is %d", x, y, z, got);
      }
  CHECK_HIP(hipFree(p.ptr));
  printf("hipMalloc3D pitch %zu and a kernel over its slices: ok\n", p.pitch);
}

static hipTextureObject_t texture_of(const hipResourceDesc& res, hipTextureAddressMode mode, hipTextureFilterMode filter,
                                     hipTextureReadMode read, int normalized) {
  hipTextureDesc td;
  memset(&td, 0, sizeof td);
  td.addressMode[0] = td.addressMode[1] = td.addressMode[2] = mode;
  td.filterMode = filter;
  td.readMode = read;
  td.normalizedCoords = normalized;
  hipTextureObject_t t = 0;
  CHECK_HIP(hipCreateTextureObject(&t, &res, &td, NULL));
  return t;
}

static hipResourceDesc array_resource(hipArray_t a) {
  hipResourceDesc r;
  memset(&r, 0, sizeof r);
  r.resType = hipResourceTypeArray;
  r.res.array.array = a;
  return r;
}

/* A texel index under an addressing mode; -1 for the border. */
static int address(int i, int n, hipTextureAddressMode mode) {
  switch (mode) {
    case hipAddressModeClamp: return i < 0 ? 0 : (i >= n ? n - 1 : i);
    case hipAddressModeWrap: return ((i % n) + n) % n;
    case hipAddressModeBorder: return (i < 0 || i >= n) ? -1 : i;
    default: CHECK(false, "mode %d not modelled", (int)mode); return -1;
  }
}

static void float_textures() {
  const int w = 19, h = 11;
  std::vector<float> host(w * h);
  for (int y = 0; y < h; y++)
    for (int x = 0; x < w; x++) host[y * w + x] = texel_value(x, y);
  hipChannelFormatDesc fd = hipCreateChannelDesc<float>();
  hipArray_t a;
  CHECK_HIP(hipMallocArray(&a, &fd, w, h, hipArrayDefault));
  CHECK_HIP(hipMemcpy2DToArray(a, 0, 0, host.data(), w * sizeof(float), w * sizeof(float), h, hipMemcpyHostToDevice));
  float* d_out;
  CHECK_HIP(hipMalloc(&d_out, 256 * sizeof(float)));
  std::vector<float> out(w * h);

  /* Point filtering, unnormalized coordinates: every texel exactly. */
  hipTextureObject_t t = texture_of(array_resource(a), hipAddressModeClamp, hipFilterModePoint, hipReadModeElementType, 0);
  hipLaunchKernelGGL(read_texels<float>, grid2(w, h), dim3(64), 0, 0, t, d_out, w, h);
  CHECK_HIP(hipGetLastError());
  CHECK_HIP(hipMemcpy(out.data(), d_out, w * h * sizeof(float), hipMemcpyDeviceToHost));
  for (int i = 0; i < w * h; i++) CHECK(out[i] == host[i], "float point texel %d is %g, expected %g", i, out[i], host[i]);
  /* Outside the image, clamped to the edge texels. */
  {
    float u[4] = {-3.5f, w + 2.5f, 4.5f, -1.0f}, v[4] = {2.5f, 0.5f, h + 7.0f, -9.0f};
    int want_x[4] = {0, w - 1, 4, 0}, want_y[4] = {2, 0, h - 1, 0};
    float *du, *dv;
    CHECK_HIP(hipMalloc(&du, sizeof u));
    CHECK_HIP(hipMalloc(&dv, sizeof v));
    CHECK_HIP(hipMemcpy(du, u, sizeof u, hipMemcpyHostToDevice));
    CHECK_HIP(hipMemcpy(dv, v, sizeof v, hipMemcpyHostToDevice));
    hipLaunchKernelGGL(sample_at, dim3(1), dim3(64), 0, 0, t, du, dv, d_out, 4);
    CHECK_HIP(hipMemcpy(out.data(), d_out, 4 * sizeof(float), hipMemcpyDeviceToHost));
    for (int i = 0; i < 4; i++) {
      float want = host[want_y[i] * w + want_x[i]];
      CHECK(out[i] == want, "clamped point sample at (%g, %g) is %g, expected %g", u[i], v[i], out[i], want);
    }
    CHECK_HIP(hipFree(du));
    CHECK_HIP(hipFree(dv));
  }
  CHECK_HIP(hipDestroyTextureObject(t));
  printf("float array, point filter, unnormalized coordinates: ok\n");

  /* Linear filtering, normalized coordinates, three addressing modes. */
  const float coords[] = {-0.3f, -0.04f, 0.0f, 0.013f, 0.26f, 0.5f, 0.771f, 0.99f, 1.0f, 1.23f};
  const int nc = sizeof coords / sizeof coords[0], n = nc * nc;
  std::vector<float> u(n), v(n);
  for (int j = 0; j < nc; j++)
    for (int i = 0; i < nc; i++) {
      u[j * nc + i] = coords[i];
      v[j * nc + i] = coords[(i + 3 * j) % nc];
    }
  float *du, *dv;
  CHECK_HIP(hipMalloc(&du, n * sizeof(float)));
  CHECK_HIP(hipMalloc(&dv, n * sizeof(float)));
  CHECK_HIP(hipMemcpy(du, u.data(), n * sizeof(float), hipMemcpyHostToDevice));
  CHECK_HIP(hipMemcpy(dv, v.data(), n * sizeof(float), hipMemcpyHostToDevice));
  const hipTextureAddressMode modes[] = {hipAddressModeClamp, hipAddressModeWrap, hipAddressModeBorder};
  const char* names[] = {"clamp", "wrap", "border"};
  for (int m = 0; m < 3; m++) {
    hipTextureObject_t lt = texture_of(array_resource(a), modes[m], hipFilterModeLinear, hipReadModeElementType, 1);
    hipLaunchKernelGGL(sample_at, dim3((n + 63) / 64), dim3(64), 0, 0, lt, du, dv, d_out, n);
    CHECK_HIP(hipGetLastError());
    CHECK_HIP(hipMemcpy(out.data(), d_out, n * sizeof(float), hipMemcpyDeviceToHost));
    for (int k = 0; k < n; k++) {
      float x = u[k] * w - 0.5f, y = v[k] * h - 0.5f;
      if (modes[m] == hipAddressModeWrap) {
        x = (u[k] - floorf(u[k])) * w - 0.5f;
        y = (v[k] - floorf(v[k])) * h - 0.5f;
      }
      int x0 = (int)floorf(x), y0 = (int)floorf(y);
      float a_ = x - x0, b_ = y - y0, t4[2][2];
      for (int j = 0; j < 2; j++)
        for (int i = 0; i < 2; i++) {
          int xi = address(x0 + i, w, modes[m]), yj = address(y0 + j, h, modes[m]);
          t4[j][i] = (xi < 0 || yj < 0) ? 0.0f : host[yj * w + xi];
        }
      float want = (1 - a_) * (1 - b_) * t4[0][0] + a_ * (1 - b_) * t4[0][1] + (1 - a_) * b_ * t4[1][0] + a_ * b_ * t4[1][1];
      float bound = (fabsf(t4[0][1] - t4[0][0]) + fabsf(t4[1][1] - t4[1][0]) + fabsf(t4[1][0] - t4[0][0]) +
                     fabsf(t4[1][1] - t4[0][1])) / 256.0f + 1e-5f * fabsf(want) + 1e-6f;
      CHECK(fabsf(out[k] - want) <= bound, "linear %s at (%g, %g) is %.7g, expected %.7g (bound %g)", names[m], u[k], v[k],
            out[k], want, bound);
    }
    CHECK_HIP(hipDestroyTextureObject(lt));
    printf("float array, linear filter, normalized coordinates, %s: ok\n", names[m]);
  }
  CHECK_HIP(hipFree(du));
  CHECK_HIP(hipFree(dv));
  CHECK_HIP(hipFree(d_out));
  CHECK_HIP(hipFreeArray(a));
}

static void uchar4_and_int_textures() {
  const int w = 23, h = 6;
  std::vector<uchar4> px(w * h);
  for (int i = 0; i < w * h; i++) px[i] = make_uchar4(i * 7 % 256, 255 - i % 256, i * 13 % 256, (i * 29 + 5) % 256);
  /* Spelled out: HIP 5.2's hipCreateChannelDesc<uchar4>() says Signed (its header gives the
   * unsigned char vectors the signed kind), and the normalized read of such an array is SNORM. */
  hipChannelFormatDesc cd = hipCreateChannelDesc(8, 8, 8, 8, hipChannelFormatKindUnsigned);
  hipArray_t a;
  CHECK_HIP(hipMallocArray(&a, &cd, w, h, hipArrayDefault));
  CHECK_HIP(hipMemcpy2DToArray(a, 0, 0, px.data(), w * sizeof(uchar4), w * sizeof(uchar4), h, hipMemcpyHostToDevice));
  hipTextureObject_t t = texture_of(array_resource(a), hipAddressModeClamp, hipFilterModePoint, hipReadModeNormalizedFloat, 0);
  float4* d4;
  CHECK_HIP(hipMalloc(&d4, w * h * sizeof(float4)));
  hipLaunchKernelGGL(read_texels<float4>, grid2(w, h), dim3(64), 0, 0, t, d4, w, h);
  CHECK_HIP(hipGetLastError());
  std::vector<float4> f(w * h);
  CHECK_HIP(hipMemcpy(f.data(), d4, w * h * sizeof(float4), hipMemcpyDeviceToHost));
  for (int i = 0; i < w * h; i++) {
    float want[4] = {px[i].x / 255.0f, px[i].y / 255.0f, px[i].z / 255.0f, px[i].w / 255.0f};
    float got[4] = {f[i].x, f[i].y, f[i].z, f[i].w};
    for (int c = 0; c < 4; c++)
      CHECK(fabsf(got[c] - want[c]) <= 1e-6f, "uchar4 texel %d channel %d is %.7g, expected %.7g", i, c, got[c], want[c]);
  }
  CHECK_HIP(hipDestroyTextureObject(t));
  CHECK_HIP(hipFreeArray(a));
  CHECK_HIP(hipFree(d4));
  printf("uchar4 array read as normalized floats: ok\n");

  std::vector<int> iv(w * h);
  for (int i = 0; i < w * h; i++) iv[i] = (i - 70) * 123457;
  hipChannelFormatDesc id = hipCreateChannelDesc<int>();
  CHECK_HIP(hipMallocArray(&a, &id, w, h, hipArrayDefault));
  CHECK_HIP(hipMemcpy2DToArray(a, 0, 0, iv.data(), w * sizeof(int), w * sizeof(int), h, hipMemcpyHostToDevice));
  t = texture_of(array_resource(a), hipAddressModeClamp, hipFilterModePoint, hipReadModeElementType, 0);
  int* di;
  CHECK_HIP(hipMalloc(&di, w * h * sizeof(int)));
  hipLaunchKernelGGL(read_texels<int>, grid2(w, h), dim3(64), 0, 0, t, di, w, h);
  CHECK_HIP(hipGetLastError());
  std::vector<int> back(w * h);
  CHECK_HIP(hipMemcpy(back.data(), di, w * h * sizeof(int), hipMemcpyDeviceToHost));
  for (int i = 0; i < w * h; i++) CHECK(back[i] == iv[i], "int texel %d is %d, expected %d", i, back[i], iv[i]);
  CHECK_HIP(hipDestroyTextureObject(t));
  CHECK_HIP(hipFreeArray(a));
  CHECK_HIP(hipFree(di));
  printf("int array: ok\n");
}

static void linear_and_pitched_textures() {
  /* tex1Dfetch on linear memory: a buffer image read with buffer_load_format. */
  const int n = 1000;
  std::vector<float> host(n), out(n);
  for (int i = 0; i < n; i++) host[i] = 0.5f * i - 17.0f;
  float *d, *d_out;
  CHECK_HIP(hipMalloc(&d, n * sizeof(float)));
  CHECK_HIP(hipMalloc(&d_out, n * sizeof(float)));
  CHECK_HIP(hipMemcpy(d, host.data(), n * sizeof(float), hipMemcpyHostToDevice));
  hipResourceDesc r;
  memset(&r, 0, sizeof r);
  r.resType = hipResourceTypeLinear;
  r.res.linear.devPtr = d;
  r.res.linear.desc = hipCreateChannelDesc<float>();
  r.res.linear.sizeInBytes = n * sizeof(float);
  hipTextureObject_t t = texture_of(r, hipAddressModeClamp, hipFilterModePoint, hipReadModeElementType, 0);
  hipLaunchKernelGGL(fetch_1d, dim3((n + 63) / 64), dim3(64), 0, 0, t, d_out, n);
  CHECK_HIP(hipGetLastError());
  CHECK_HIP(hipMemcpy(out.data(), d_out, n * sizeof(float), hipMemcpyDeviceToHost));
  for (int i = 0; i < n; i++) CHECK(out[i] == host[i], "tex1Dfetch %d is %g, expected %g", i, out[i], host[i]);
  CHECK_HIP(hipDestroyTextureObject(t));
  CHECK_HIP(hipFree(d));
  printf("tex1Dfetch on linear memory: ok\n");

  /* A pitched 2D texture over hipMallocPitch memory. */
  const int w = 45, h = 9;
  float* p;
  size_t pitch;
  CHECK_HIP(hipMallocPitch((void**)&p, &pitch, w * sizeof(float), h));
  std::vector<float> img(w * h);
  for (int y = 0; y < h; y++)
    for (int x = 0; x < w; x++) img[y * w + x] = texel_value(x, y) * 3.0f;
  CHECK_HIP(hipMemcpy2D(p, pitch, img.data(), w * sizeof(float), w * sizeof(float), h, hipMemcpyHostToDevice));
  memset(&r, 0, sizeof r);
  r.resType = hipResourceTypePitch2D;
  r.res.pitch2D.devPtr = p;
  r.res.pitch2D.desc = hipCreateChannelDesc<float>();
  r.res.pitch2D.width = w;
  r.res.pitch2D.height = h;
  r.res.pitch2D.pitchInBytes = pitch;
  t = texture_of(r, hipAddressModeClamp, hipFilterModePoint, hipReadModeElementType, 0);
  hipLaunchKernelGGL(read_texels<float>, grid2(w, h), dim3(64), 0, 0, t, d_out, w, h);
  CHECK_HIP(hipGetLastError());
  CHECK_HIP(hipMemcpy(out.data(), d_out, w * h * sizeof(float), hipMemcpyDeviceToHost));
  for (int i = 0; i < w * h; i++) CHECK(out[i] == img[i], "pitch2D texel %d is %g, expected %g", i, out[i], img[i]);
  CHECK_HIP(hipDestroyTextureObject(t));
  CHECK_HIP(hipFree(p));
  CHECK_HIP(hipFree(d_out));
  printf("pitched 2D texture: ok\n");
}

static void surfaces() {
  const int w = 33, h = 7;
  hipChannelFormatDesc fd = hipCreateChannelDesc<float>();
  hipArray_t a;
  /* HIP 5.2 refuses hipArraySurfaceLoadStore (hipErrorNotSupported); its arrays take surface
   * stores without it. */
  CHECK_HIP(hipMallocArray(&a, &fd, w, h, hipArrayDefault));
  hipResourceDesc r = array_resource(a);
  hipSurfaceObject_t s = 0;
  CHECK_HIP(hipCreateSurfaceObject(&s, &r));
  hipLaunchKernelGGL(write_surface, grid2(w, h), dim3(64), 0, 0, s, w, h);
  CHECK_HIP(hipGetLastError());
  std::vector<float> back(w * h, -1.0f);
  CHECK_HIP(hipMemcpy2DFromArray(back.data(), w * sizeof(float), a, 0, 0, w * sizeof(float), h, hipMemcpyDeviceToHost));
  for (int y = 0; y < h; y++)
    for (int x = 0; x < w; x++) {
      float want = 1.5f * x - 0.25f * y;
      CHECK(back[y * w + x] == want, "surface texel (%d, %d) is %g, expected %g", x, y, back[y * w + x], want);
    }
  CHECK_HIP(hipDestroySurfaceObject(s));
  CHECK_HIP(hipFreeArray(a));
  printf("surface written by surf2Dwrite, read with hipMemcpy2DFromArray: ok\n");
}

int main() {
  hipDeviceProp_t prop;
  CHECK_HIP(hipGetDeviceProperties(&prop, 0));
  CHECK(prop.maxTexture2D[0] == 16384 && prop.maxTexture2D[1] == 16384, "maxTexture2D %d x %d", prop.maxTexture2D[0],
        prop.maxTexture2D[1]);
  pitched_memory();
  linear_and_pitched_textures();
  float_textures();
  uchar4_and_int_textures();
  surfaces();
  printf("PASS\n");
  return 0;
}
