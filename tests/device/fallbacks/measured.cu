// device.fallbacks (see exact.cu): the fallbacks measured against the aligned cases, in one process.
#include "fallbacks_common.hpp"

TEST_CASE(
    "a 12-byte field beside float columns moves in consecutive 16-byte words, DRAM bytes ideal, within 5% of seven float columns") {
  if (auto reason = ct::gpu_unavailable_reason()) COALESCE_SKIP(*reason);
  fb::twelve_byte_columns work(count_or_small(std::size_t(1) << 25));
  work.fallback(0);
  work.aligned(0);
  CHECK(work.fallback_exact());
  CHECK(work.aligned_exact());
  COALESCE_REQUIRE_COUNTERS(profiler());
  const auto m = profiler().measure([&] { work.fallback(0); });
  std::printf("\nfor_each(soa_view<Body>), Vec3f columns: load / store sectors per request %.2f / %.2f, DRAM %.1f MB "
              "(ideal %.1f MB)\n",
              m.load_sectors_per_request(), m.store_sectors_per_request(),
              (m.dram_bytes_read() + m.dram_bytes_write()) / 1e6, work.bytes / 1e6);
  // The float3 columns are staged a warp at a time, so every global request covers 512
  // consecutive bytes (16 sectors), as for the float column; read straight, with lanes 48 bytes
  // apart, each would touch 32. What reaches DRAM is the ideal.
  CHECK(m.load_sectors_per_request() == Approx(16.0).epsilon(0.01));
  CHECK(m.store_sectors_per_request() == Approx(16.0).epsilon(0.01));
  CHECK(m.dram_bytes_read() + m.dram_bytes_write() <= 1.05 * work.bytes);
  ct::bandwidth_meter meter;
  const auto c = coalesce_test::compare_with_competitors(
      meter, "12-byte columns (pos, vel) and a float column: coalesce::for_each(soa_view<Body>)",
      [&](cudaStream_t s) { work.fallback(s); },
      aligned_case("coalesce::for_each(soa_view<FlatBody>), 7 float columns", [&](cudaStream_t s) { work.aligned(s); }),
      work.bytes);
  CHECK(c.versus_best_competitor() >= targets::fallback_versus_aligned);
}

TEST_CASE(
    "a 16-byte struct of 4-byte alignment: transform and for_each read it as one 16-byte access, within 5% of the aligned struct") {
  if (auto reason = ct::gpu_unavailable_reason()) COALESCE_SKIP(*reason);
  fb::under_aligned_structs work(count_or_small(std::size_t(1) << 26));
  work.transform_fallback(0);
  CHECK(work.sums_exact());
  work.transform_aligned(0);
  CHECK(work.sums_exact());
  work.for_each_fallback(0);
  work.for_each_aligned(0);
  CHECK(work.halved_exact(1));
  CHECK(work.aligned_halved_exact(1));
  // At a 4-byte-aligned address the same calls take the element walk, and stay exact.
  {
    fb::under_aligned_structs shifted(4097);
    // 4095 Quads starting one float in (4-byte aligned), then 4095 starting one Quad in (16-byte aligned).
    auto odd = cuda::std::span<fb::Quad>(
        reinterpret_cast<fb::Quad*>(reinterpret_cast<float*>(shifted.quad_span().data()) + 1), 4095);
    auto quads = shifted.quad_span().subspan(1, 4095);
    coalesce::for_each(odd, fb::quad_halve{});
    coalesce::for_each(quads, fb::quad_halve{});
    const auto got = shifted.quads.download();
    const auto* before = reinterpret_cast<const float*>(shifted.initial.data());
    const auto* after = reinterpret_cast<const float*>(got.data());
    for (std::size_t k = 0; k < 4 * 4097; ++k) {
      // Floats 1 .. 4 x 4095 were halved by the 4-byte-aligned walk; floats 4 .. 4 x 4096 - 1 by the 16-byte one.
      float expected = before[k];
      if (k >= 1 && k < 1 + 4 * 4095) expected *= 0.5f;
      if (k >= 4 && k < 4 + 4 * 4095) expected *= 0.5f;
      if (after[k] != expected) FAIL("float " << k << " differs");
    }
  }
  COALESCE_REQUIRE_COUNTERS(profiler());
  const auto t = profiler().measure([&] { work.transform_fallback(0); });
  const auto f = profiler().measure([&] { work.for_each_fallback(0); });
  std::printf("\ntransform(span<const Quad>): load / store sectors per request %.2f / %.2f; for_each(span<Quad>): "
              "%.2f / %.2f\n",
              t.load_sectors_per_request(), t.store_sectors_per_request(), f.load_sectors_per_request(),
              f.store_sectors_per_request());
  // One 16-byte load per lane: 16 sectors a request (four 4-byte loads would make 4 x 4 requests of
  // 16 sectors' span each, 4 sectors per request on average).
  CHECK(t.load_sectors_per_request() == Approx(16.0).epsilon(0.01));
  CHECK(t.store_sectors_per_request() == Approx(4.0).epsilon(0.01));
  CHECK(f.load_sectors_per_request() == Approx(16.0).epsilon(0.01));
  CHECK(f.store_sectors_per_request() == Approx(16.0).epsilon(0.01));
  ct::bandwidth_meter meter;
  const auto a = coalesce_test::compare_with_competitors(
      meter, "a 16-byte struct of 4-byte alignment into a float each: coalesce::transform(span<const Quad>)",
      [&](cudaStream_t s) { work.transform_fallback(s); },
      aligned_case("coalesce::transform(span<const AlignedQuad>)", [&](cudaStream_t s) { work.transform_aligned(s); }),
      20.0 * double(work.n));
  CHECK(a.versus_best_competitor() >= targets::fallback_versus_aligned);
  const auto b = coalesce_test::compare_with_competitors(
      meter, "a 16-byte struct of 4-byte alignment in place: coalesce::for_each(span<Quad>)",
      [&](cudaStream_t s) { work.for_each_fallback(s); },
      aligned_case("coalesce::for_each(span<AlignedQuad>)", [&](cudaStream_t s) { work.for_each_aligned(s); }),
      32.0 * double(work.n));
  CHECK(b.versus_best_competitor() >= targets::fallback_versus_aligned);
}

TEST_CASE("AoS <-> SoA conversion from and to an array 4, 8 or 12 bytes off 16-byte alignment is exact") {
  if (auto reason = ct::gpu_unavailable_reason()) COALESCE_SKIP(*reason);
  const std::size_t n = 256 * 7 + 13;  // a partial last chunk
  const auto particles = coalesce_test::random_particles(n);
  ct::device_buffer<unsigned char> raw(n * sizeof(Particle) + 16);
  for (std::size_t offset : {4, 8, 12}) {
    auto* structs = reinterpret_cast<Particle*>(raw.data() + offset);
    COALESCE_CUDA_CHECK(cudaMemcpy(structs, particles.data(), n * sizeof(Particle), cudaMemcpyHostToDevice));
    coalesce::soa_vector<Particle> soa(n);
    coalesce::copy_aos_to_soa(static_cast<const Particle*>(structs), soa.view());
    const auto columns = soa.to_vector();
    for (std::size_t i = 0; i < n; ++i)
      if (!coalesce_test::same(columns[i], particles[i])) FAIL("offset " << offset << ": AoS -> SoA differs at " << i);
    raw.poison();
    coalesce::copy_soa_to_aos(soa.const_view(), structs);
    std::vector<Particle> back(n);
    COALESCE_CUDA_CHECK(cudaMemcpy(back.data(), structs, n * sizeof(Particle), cudaMemcpyDeviceToHost));
    for (std::size_t i = 0; i < n; ++i)
      if (!coalesce_test::same(back[i], particles[i])) FAIL("offset " << offset << ": SoA -> AoS differs at " << i);
  }
}

TEST_CASE(
    "AoS <-> SoA conversion 4 bytes off 16-byte alignment keeps 16-byte copies and is within 5% of the aligned array") {
  if (auto reason = ct::gpu_unavailable_reason()) COALESCE_SKIP(*reason);
  fb::offset_array_of_structs work(count_or_small(std::size_t(1) << 25));
  Particle* aligned = work.aligned_structs();
  Particle* offset = work.offset_structs();
  for (Particle* structs : {offset, aligned}) {
    work.prepare_to_soa(structs);
    work.to_soa(structs, 0);
    CHECK(work.soa_exact());
    work.prepare_to_aos();
    work.to_aos(structs, 0);
    CHECK(work.aos_exact(structs));
  }
  COALESCE_REQUIRE_COUNTERS(profiler());
  const auto in = profiler().measure([&] { work.to_soa(offset, 0); });
  const auto out = profiler().measure([&] { work.to_aos(offset, 0); });
  std::printf("\ncopy_aos_to_soa from +4 bytes: global load sectors per request %.2f; copy_soa_to_aos to +4 bytes: "
              "global store sectors per request %.2f\n",
              in.load_sectors_per_request(), out.store_sectors_per_request());
  // 16-byte words: 12 requests of 16-17 sectors per 6 KiB chunk, and one each for the head's 12
  // bytes and the tail's 4 (about 14 on average; 4-byte words would give 4, a byte loop 1-2).
  CHECK(in.load_sectors_per_request() >= 12.0);
  CHECK(out.store_sectors_per_request() >= 12.0);
  ct::bandwidth_meter meter;
  const auto a = coalesce_test::compare_with_competitors(
      meter, "AoS to SoA from 4 bytes off 16-byte alignment: coalesce::copy_aos_to_soa",
      [&](cudaStream_t s) { work.to_soa(offset, s); },
      aligned_case("coalesce::copy_aos_to_soa from a 16-byte-aligned array",
                   [&](cudaStream_t s) { work.to_soa(aligned, s); }),
      work.bytes);
  CHECK(a.versus_best_competitor() >= targets::fallback_versus_aligned);
  const auto b = coalesce_test::compare_with_competitors(
      meter, "SoA to AoS at 4 bytes off 16-byte alignment: coalesce::copy_soa_to_aos",
      [&](cudaStream_t s) { work.to_aos(offset, s); },
      aligned_case("coalesce::copy_soa_to_aos to a 16-byte-aligned array",
                   [&](cudaStream_t s) { work.to_aos(aligned, s); }),
      work.bytes);
  CHECK(b.versus_best_competitor() >= targets::fallback_versus_aligned);
}
