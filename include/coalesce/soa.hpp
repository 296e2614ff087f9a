// coalesce: structure-of-arrays storage for an array-of-structs type. soa_vector<Particle> keeps
// one column per field of Particle, each 256-byte aligned, in one allocation; its soa_view is
// what kernels take. view[i] stands for element i: get<I>(view[i]) or, after
// COALESCE_FIELDS(Particle, x, y, ...), view[i].x is a reference into the x column, so a kernel
// body written for Particle* compiles unchanged and each field access is a coalesced column access.
// A field that is a struct, a CUDA vector type, a C array or a (cuda::)std::array is split into
// one column per leaf (Body { float3 pos, vel; float mass; } is seven float columns), and
// view[i].pos.x, view[i].p[k] are references into them; coalesce::keep_whole<F> keeps a type whole.
//
// T: any aggregate (a struct with public fields, no constructors, no virtuals) of up to 64
// fields, each trivially copyable or bitwise copyable by coalesce::is_bitwise_copyable, none of
// them a reference, const, a bit-field or an array of structs, and no member with an alignas of
// its own. Host-capable: soa_vector<T, host_space>
// needs no GPU and no nvcc.
#pragma once
/// @file

// The parts, one concept each: what view[i] is, the macro that names fields, the view and its
// iterator, the owning vector.
#include <coalesce/element_methods.hpp>
#include <coalesce/soa_fields.hpp>
#include <coalesce/soa_reference.hpp>
#include <coalesce/soa_vector.hpp>
#include <coalesce/soa_view.hpp>
