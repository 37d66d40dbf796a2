// gen_kineto: writes synthetic Kineto-like (PyTorch profiler) rank files for
// benchmarks, seeded and deterministic.
//
//   gen_kineto --ranks N --events M --seed S --out DIR [--gzip] [--gpus-per-node 8]
//
// Each rank r gets DIR/rank<r>.pt.trace.json (or .json.gz, one gzip member)
// in Kineto's JSON Object Format, laid out the way libkineto's
// ChromeTraceLogger writes it (pretty-printed, ", " separators, ~450 bytes
// per event on average, like the real Kineto files in tests/data):
//
//   { "schemaVersion", "deviceProperties" (gpus-per-node entries),
//     "distributedInfo" {backend nccl, rank, world_size}, "record_shapes",
//     "traceEvents": [ sections, in this order:
//        CPU ops       X cat cpu_op / user_annotation, pid 4000+r, two tids,
//                      per thread and in completion order (children before
//                      their parent), so not sorted even within a thread;
//        CUDA runtime  X cat cuda_runtime on the launching thread;
//        GPU           X cat kernel / gpu_memcpy / gpu_memset, pid = local
//                      device ordinal (r % gpus-per-node), tid = stream (int);
//        flows         s/f pairs, cat ac2g, id = correlation, f with bp "e";
//        instants      i "[memory]" (s t);
//        metadata      M process_name/process_labels/process_sort_index for
//                      the CPU process and every local GPU, thread_name and
//                      thread_sort_index, a "Spans" string-pid X event, and
//                      the "Traces" / "" string-pid instants Kineto writes ],
//     "traceName", "displayTimeUnit" }
//
// Every file holds exactly --events trace events (metadata included), so a
// reader's event count can be checked against ranks x events. Timestamps
// are epoch microseconds around 1.68e15: with --ts=frac as Kineto 2.x writes
// them (3 decimals, `1682725898236567.123`), with --ts=int as older Kineto
// (integers); --ts=mixed (default) alternates per rank. The same seed gives
// the same bytes whatever --jobs is. One line of JSON on stdout sums up what
// was written (files, events, json_bytes, file_bytes).
#include <libdeflate.h>
#include <sys/stat.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <array>
#include <atomic>
#include <charconv>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

namespace {

// ---------------------------------------------------------------- random

// xoshiro256** seeded by splitmix64: fixed algorithms, so a seed gives the
// same file on every platform and standard library.
class Rng {
 public:
  explicit Rng(uint64_t seed) {
    for (auto& w : s_) {
      seed += 0x9e3779b97f4a7c15ULL;
      uint64_t z = seed;
      z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
      z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
      w = z ^ (z >> 31);
    }
  }
  uint64_t Next() {
    const uint64_t result = Rotl(s_[1] * 5, 7) * 9;
    const uint64_t t = s_[1] << 17;
    s_[2] ^= s_[0];
    s_[3] ^= s_[1];
    s_[1] ^= s_[2];
    s_[0] ^= s_[3];
    s_[2] ^= t;
    s_[3] = Rotl(s_[3], 45);
    return result;
  }
  // Uniform in [0, n).
  uint32_t Below(uint32_t n) { return static_cast<uint32_t>(((Next() >> 32) * n) >> 32); }
  // Uniform in [lo, hi].
  int64_t Range(int64_t lo, int64_t hi) {
    return lo + static_cast<int64_t>(Next() % static_cast<uint64_t>(hi - lo + 1));
  }
  // True with probability pct / 100.
  bool Percent(uint32_t pct) { return Below(100) < pct; }
  template <typename T, size_t N>
  const T& Pick(const std::array<T, N>& a) {
    return a[Below(N)];
  }

 private:
  static uint64_t Rotl(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }
  uint64_t s_[4];
};

// ---------------------------------------------------------------- names
// ASCII only, no quotes or backslashes: written as JSON string bodies as is.

constexpr std::array<std::string_view, 84> kAtenOps = {
    "aten::empty", "aten::empty_strided", "aten::empty_like", "aten::zeros", "aten::zeros_like",
    "aten::ones_like", "aten::zero_", "aten::fill_", "aten::copy_", "aten::to", "aten::_to_copy",
    "aten::add", "aten::add_", "aten::mul", "aten::mul_", "aten::div", "aten::div_", "aten::sub",
    "aten::rsub", "aten::neg", "aten::mm", "aten::addmm", "aten::bmm", "aten::baddbmm",
    "aten::matmul", "aten::linear", "aten::t", "aten::transpose", "aten::permute", "aten::view",
    "aten::reshape", "aten::_reshape_alias", "aten::_unsafe_view", "aten::as_strided",
    "aten::expand", "aten::contiguous", "aten::clone", "aten::cat", "aten::stack", "aten::split",
    "aten::chunk", "aten::narrow", "aten::slice", "aten::select", "aten::unsqueeze",
    "aten::squeeze", "aten::index", "aten::index_select", "aten::gather", "aten::scatter_",
    "aten::embedding", "aten::relu", "aten::gelu", "aten::silu", "aten::sigmoid", "aten::tanh",
    "aten::softmax", "aten::_softmax", "aten::log_softmax", "aten::_log_softmax",
    "aten::nll_loss", "aten::nll_loss_forward", "aten::cross_entropy_loss", "aten::layer_norm",
    "aten::native_layer_norm", "aten::dropout", "aten::native_dropout", "aten::sum",
    "aten::mean", "aten::max", "aten::argmax", "aten::norm", "aten::sqrt", "aten::rsqrt",
    "aten::pow", "aten::exp", "aten::clamp", "aten::where", "aten::masked_fill_",
    "aten::scaled_dot_product_attention", "aten::_scaled_dot_product_flash_attention",
    "aten::_flash_attention_forward", "aten::detach", "aten::record_stream"};

constexpr std::array<std::string_view, 34> kBackwardNodes = {
    "MmBackward0", "AddmmBackward0", "BmmBackward0", "MulBackward0", "AddBackward0",
    "DivBackward0", "SubBackward0", "ViewBackward0", "TBackward0", "TransposeBackward0",
    "PermuteBackward0", "UnsafeViewBackward0", "ReshapeAliasBackward0", "ExpandBackward0",
    "CloneBackward0", "SoftmaxBackward0", "LogSoftmaxBackward0", "GeluBackward0",
    "SiluBackward0", "NativeLayerNormBackward0", "NativeDropoutBackward0", "EmbeddingBackward0",
    "ScaledDotProductFlashAttentionBackward0", "SumBackward0", "MeanBackward0", "CatBackward0",
    "SplitBackward0", "SliceBackward0", "SelectBackward0", "NllLossBackward0",
    "ToCopyBackward0", "WhereBackward0", "RsqrtBackward0", "torch::autograd::AccumulateGrad"};

constexpr std::array<std::string_view, 12> kBackwardOps = {
    "aten::mm", "aten::mul", "aten::sum", "aten::add_", "aten::_softmax_backward_data",
    "aten::gelu_backward", "aten::native_layer_norm_backward", "aten::native_dropout_backward",
    "aten::embedding_dense_backward", "aten::_flash_attention_backward", "aten::view",
    "aten::detach"};

constexpr std::array<std::string_view, 10> kOptimizerOps = {
    "aten::_foreach_add_", "aten::_foreach_mul_", "aten::_foreach_addcmul_",
    "aten::_foreach_addcdiv_", "aten::_foreach_sqrt", "aten::_foreach_div_",
    "aten::_foreach_lerp_", "aten::_foreach_norm", "aten::_fused_adamw_", "aten::clamp_"};

constexpr std::array<std::string_view, 44> kKernels = {
    "void at::native::vectorized_elementwise_kernel<4, at::native::CUDAFunctor_add<float>, at::detail::Array<char*, 3> >(int, at::native::CUDAFunctor_add<float>, at::detail::Array<char*, 3>)",
    "void at::native::vectorized_elementwise_kernel<4, at::native::AUnaryFunctor<float, float, float, at::native::binary_internal::MulFunctor<float> >, at::detail::Array<char*, 2> >(int, at::native::AUnaryFunctor<float, float, float, at::native::binary_internal::MulFunctor<float> >, at::detail::Array<char*, 2>)",
    "void at::native::vectorized_elementwise_kernel<4, at::native::BUnaryFunctor<float, float, float, at::native::binary_internal::MulFunctor<float> >, at::detail::Array<char*, 2> >(int, at::native::BUnaryFunctor<float, float, float, at::native::binary_internal::MulFunctor<float> >, at::detail::Array<char*, 2>)",
    "void at::native::vectorized_elementwise_kernel<4, at::native::FillFunctor<float>, at::detail::Array<char*, 1> >(int, at::native::FillFunctor<float>, at::detail::Array<char*, 1>)",
    "void at::native::vectorized_elementwise_kernel<4, at::native::FillFunctor<c10::BFloat16>, at::detail::Array<char*, 1> >(int, at::native::FillFunctor<c10::BFloat16>, at::detail::Array<char*, 1>)",
    "void at::native::vectorized_elementwise_kernel<4, at::native::BinaryFunctor<float, float, float, at::native::binary_internal::DivFunctor<float> >, at::detail::Array<char*, 3> >(int, at::native::BinaryFunctor<float, float, float, at::native::binary_internal::DivFunctor<float> >, at::detail::Array<char*, 3>)",
    "void at::native::unrolled_elementwise_kernel<at::native::direct_copy_kernel_cuda(at::TensorIteratorBase&)::{lambda()#3}::operator()() const::{lambda()#7}::operator()() const::{lambda(float)#1}, at::detail::Array<char*, 2>, TrivialOffsetCalculator<1, unsigned int>, TrivialOffsetCalculator<1, unsigned int>, at::native::memory::LoadWithCast<1>, at::native::memory::StoreWithCast<1> >(int, at::native::direct_copy_kernel_cuda(at::TensorIteratorBase&)::{lambda()#3}::operator()() const::{lambda()#7}::operator()() const::{lambda(float)#1}, at::detail::Array<char*, 2>, TrivialOffsetCalculator<1, unsigned int>, TrivialOffsetCalculator<1, unsigned int>, at::native::memory::LoadWithCast<1>, at::native::memory::StoreWithCast<1>)",
    "void at::native::elementwise_kernel<128, 2, at::native::gpu_kernel_impl<at::native::direct_copy_kernel_cuda(at::TensorIteratorBase&)::{lambda()#3}::operator()() const::{lambda()#8}::operator()() const::{lambda(c10::BFloat16)#1}>(at::TensorIteratorBase&, at::native::direct_copy_kernel_cuda(at::TensorIteratorBase&)::{lambda()#3}::operator()() const::{lambda()#8}::operator()() const::{lambda(c10::BFloat16)#1} const&)::{lambda(int)#1}>(int, at::native::gpu_kernel_impl<at::native::direct_copy_kernel_cuda(at::TensorIteratorBase&)::{lambda()#3}::operator()() const::{lambda()#8}::operator()() const::{lambda(c10::BFloat16)#1}>(at::TensorIteratorBase&, at::native::direct_copy_kernel_cuda(at::TensorIteratorBase&)::{lambda()#3}::operator()() const::{lambda()#8}::operator()() const::{lambda(c10::BFloat16)#1} const&)::{lambda(int)#1})",
    "sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x128x64_warpgroupsize1x1x1_execute_segment_k_off_kernel__5x_cublas",
    "sm90_xmma_gemm_bf16bf16_bf16f32_f32_nn_n_tilesize128x256x64_warpgroupsize2x1x1_execute_segment_k_off_kernel__5x_cublas",
    "sm90_xmma_gemm_bf16bf16_bf16f32_f32_nt_n_tilesize64x128x64_warpgroupsize1x1x1_execute_segment_k_off_kernel__5x_cublas",
    "ampere_bf16_s16816gemm_bf16_128x128_ldg8_f2f_stages_64x3_tn",
    "ampere_bf16_s16816gemm_bf16_256x128_ldg8_f2f_stages_64x3_nn",
    "void cutlass::Kernel<cutlass_80_tensorop_bf16_s16816gemm_relu_bf16_64x64_64x4_tn_align8>(cutlass_80_tensorop_bf16_s16816gemm_relu_bf16_64x64_64x4_tn_align8::Params)",
    "void cublasLt::splitKreduce_kernel<32, 16, int, float, __nv_bfloat16, float, __nv_bfloat16, false, false, true, false, false>(cublasLt::cublasSplitKParams<float>, float const*, __nv_bfloat16 const*, __nv_bfloat16*, float const*, float const*, __nv_bfloat16 const*, float const*, __nv_bfloat16*, void*, long, float*, int*)",
    "void flash_fwd_kernel<Flash_fwd_kernel_traits<128, 128, 64, 4, false, false, cutlass::bfloat16_t, Flash_kernel_traits<128, 128, 64, 4, cutlass::bfloat16_t> >, false, true, false, false, true, true, false>(flash_fwd_params)",
    "void flash_bwd_dq_dk_dv_loop_seqk_parallel_kernel<Flash_bwd_kernel_traits<128, 64, 128, 8, 2, 4, 2, false, false, cutlass::bfloat16_t, Flash_kernel_traits<128, 64, 128, 8, cutlass::bfloat16_t> >, false, true, false, false, true, true>(flash_bwd_params)",
    "void flash_bwd_dot_do_o_kernel<true, Flash_bwd_kernel_traits<128, 64, 128, 8, 2, 4, 2, false, false, cutlass::bfloat16_t, Flash_kernel_traits<128, 64, 128, 8, cutlass::bfloat16_t> > >(flash_bwd_params)",
    "void flash_bwd_convert_dq_kernel<Flash_bwd_kernel_traits<128, 64, 128, 8, 2, 4, 2, false, false, cutlass::bfloat16_t, Flash_kernel_traits<128, 64, 128, 8, cutlass::bfloat16_t> > >(flash_bwd_params, int)",
    "void at::native::(anonymous namespace)::vectorized_layer_norm_kernel<c10::BFloat16, float>(int, float, c10::BFloat16 const*, c10::BFloat16 const*, c10::BFloat16 const*, float*, float*, c10::BFloat16*)",
    "void at::native::(anonymous namespace)::layer_norm_grad_input_kernel_vectorized<c10::BFloat16, float>(c10::BFloat16 const*, c10::BFloat16 const*, float const*, float const*, c10::BFloat16 const*, c10::BFloat16*, int)",
    "void at::native::(anonymous namespace)::GammaBetaBackwardCUDAKernel_32x32<c10::BFloat16, float>(long, long, c10::BFloat16 const*, c10::BFloat16 const*, float const*, float const*, c10::BFloat16*, c10::BFloat16*)",
    "void at::native::(anonymous namespace)::RowwiseMomentsCUDAKernel<float, float>(long, float, float const*, float*, float*)",
    "void at::native::vectorized_elementwise_kernel<4, at::native::GeluCUDAKernelImpl(at::TensorIteratorBase&, at::native::GeluType)::{lambda()#2}::operator()() const::{lambda()#4}::operator()() const::{lambda(c10::BFloat16)#1}, at::detail::Array<char*, 2> >(int, at::native::GeluCUDAKernelImpl(at::TensorIteratorBase&, at::native::GeluType)::{lambda()#2}::operator()() const::{lambda()#4}::operator()() const::{lambda(c10::BFloat16)#1}, at::detail::Array<char*, 2>)",
    "void at::native::vectorized_elementwise_kernel<4, at::native::GeluBackwardCUDAKernelImpl(at::TensorIteratorBase&, at::native::GeluType)::{lambda()#2}::operator()() const::{lambda()#4}::operator()() const::{lambda(c10::BFloat16, c10::BFloat16)#1}, at::detail::Array<char*, 3> >(int, at::native::GeluBackwardCUDAKernelImpl(at::TensorIteratorBase&, at::native::GeluType)::{lambda()#2}::operator()() const::{lambda()#4}::operator()() const::{lambda(c10::BFloat16, c10::BFloat16)#1}, at::detail::Array<char*, 3>)",
    "void at::native::vectorized_elementwise_kernel<4, at::native::(anonymous namespace)::silu_kernel(at::TensorIteratorBase&)::{lambda()#1}::operator()() const::{lambda()#4}::operator()() const::{lambda(c10::BFloat16)#1}, at::detail::Array<char*, 2> >(int, at::native::(anonymous namespace)::silu_kernel(at::TensorIteratorBase&)::{lambda()#1}::operator()() const::{lambda()#4}::operator()() const::{lambda(c10::BFloat16)#1}, at::detail::Array<char*, 2>)",
    "void at::native::(anonymous namespace)::fused_dropout_kernel_vec<c10::BFloat16, float, unsigned int, 1, 4, bool>(at::cuda::detail::TensorInfo<c10::BFloat16 const, unsigned int>, at::cuda::detail::TensorInfo<c10::BFloat16, unsigned int>, at::cuda::detail::TensorInfo<bool, unsigned int>, unsigned int, float, at::PhiloxCudaState)",
    "void at::native::(anonymous namespace)::cunn_SoftMaxForward<4, float, float, float, at::native::(anonymous namespace)::SoftMaxForwardEpilogue>(float*, float const*, int)",
    "void at::native::(anonymous namespace)::cunn_SoftMaxBackward<4, float, float, float, at::native::(anonymous namespace)::SoftMaxBackwardEpilogue>(float*, float const*, float const*, int)",
    "void at::native::(anonymous namespace)::softmax_warp_forward<float, float, float, 10, true, false>(float*, float const*, int, int, int, bool const*, int, bool)",
    "void at::native::(anonymous namespace)::softmax_warp_backward<float, float, float, 10, true, false>(float*, float const*, float const*, int, int, int, bool const*)",
    "void at::native::reduce_kernel<512, 1, at::native::ReduceOp<float, at::native::func_wrapper_t<float, at::native::sum_functor<float, float, float>::operator()(at::TensorIterator&)::{lambda(float, float)#1}>, unsigned int, float, 4> >(at::native::ReduceOp<float, at::native::func_wrapper_t<float, at::native::sum_functor<float, float, float>::operator()(at::TensorIterator&)::{lambda(float, float)#1}>, unsigned int, float, 4>)",
    "void at::native::reduce_kernel<128, 4, at::native::ReduceOp<float, at::native::NormTwoOps<float, float, float>, unsigned int, float, 4> >(at::native::ReduceOp<float, at::native::NormTwoOps<float, float, float>, unsigned int, float, 4>)",
    "void at::native::(anonymous namespace)::indexSelectLargeIndex<c10::BFloat16, long, unsigned int, 2, 2, -2, true>(at::cuda::detail::TensorInfo<c10::BFloat16, unsigned int>, at::cuda::detail::TensorInfo<c10::BFloat16 const, unsigned int>, at::cuda::detail::TensorInfo<long const, unsigned int>, int, int, unsigned int, unsigned int, long)",
    "void at::native::(anonymous namespace)::embedding_backward_feature_kernel<c10::BFloat16, float, long>(long const*, c10::BFloat16 const*, c10::BFloat16*, int, long, int)",
    "void at::native::(anonymous namespace)::nll_loss_forward_reduce_cuda_kernel_2d<float, float, long>(float*, float*, float const*, long const*, float const*, bool, long, long, long, long)",
    "void at::native::(anonymous namespace)::nll_loss_backward_reduce_cuda_kernel_2d<float, long>(float*, float const*, long const*, float const*, float const*, bool, int, int, long, long)",
    "void at::native::(anonymous namespace)::CatArrayBatchedCopy<at::native::(anonymous namespace)::OpaqueType<2u>, unsigned int, 3, 64, 64>(at::native::(anonymous namespace)::OpaqueType<2u>*, at::native::(anonymous namespace)::CatArrInputTensorMetadata<at::native::(anonymous namespace)::OpaqueType<2u>, unsigned int, 64, 64>, at::native::(anonymous namespace)::TensorSizeStride<unsigned int, 4u>, int, unsigned int)",
    "void at::native::vectorized_elementwise_kernel<4, at::native::where_kernel_impl(at::TensorIterator&)::{lambda()#1}::operator()() const::{lambda()#8}::operator()() const::{lambda(bool, float, float)#1}, at::detail::Array<char*, 4> >(int, at::native::where_kernel_impl(at::TensorIterator&)::{lambda()#1}::operator()() const::{lambda()#8}::operator()() const::{lambda(bool, float, float)#1}, at::detail::Array<char*, 4>)",
    "void at::native::vectorized_elementwise_kernel<4, at::native::sqrt_kernel_cuda(at::TensorIteratorBase&)::{lambda()#2}::operator()() const::{lambda()#2}::operator()() const::{lambda(float)#1}, at::detail::Array<char*, 2> >(int, at::native::sqrt_kernel_cuda(at::TensorIteratorBase&)::{lambda()#2}::operator()() const::{lambda()#2}::operator()() const::{lambda(float)#1}, at::detail::Array<char*, 2>)",
    "void at::native::multi_tensor_apply_kernel<at::native::TensorListMetadata<4>, at::native::(anonymous namespace)::FusedAdamMathFunctor<float, 4, (at::native::ADAM_MODE)1, false>, double, double, double, double, double, double, bool, float*, float*>(at::native::TensorListMetadata<4>, at::native::(anonymous namespace)::FusedAdamMathFunctor<float, 4, (at::native::ADAM_MODE)1, false>, double, double, double, double, double, double, bool, float*, float*)",
    "void at::native::multi_tensor_apply_kernel<at::native::TensorListMetadata<1>, at::native::(anonymous namespace)::BinaryOpScalarFunctor<float, 1, 1, 0>, std::multiplies<float>, float>(at::native::TensorListMetadata<1>, at::native::(anonymous namespace)::BinaryOpScalarFunctor<float, 1, 1, 0>, std::multiplies<float>, float)",
    "void at::native::multi_tensor_apply_kernel<at::native::TensorListMetadata<2>, at::native::(anonymous namespace)::PointwiseOpScalarFunctor<float, 2, 2, 0>, std::multiplies<float>, float>(at::native::TensorListMetadata<2>, at::native::(anonymous namespace)::PointwiseOpScalarFunctor<float, 2, 2, 0>, std::multiplies<float>, float)",
    "void at_cuda_detail::cub::DeviceRadixSortOnesweepKernel<at_cuda_detail::cub::DeviceRadixSortPolicy<long, long, int>::Policy800, false, long, long, int, int>(int*, int*, long*, long const*, long*, long const*, long*, long const*, int, int, int)",
};

constexpr std::array<std::string_view, 6> kNcclKernels = {
    "ncclDevKernel_AllReduce_Sum_bf16_RING_LL(ncclDevComm*, unsigned long, ncclWork*)",
    "ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevComm*, unsigned long, ncclWork*)",
    "ncclDevKernel_ReduceScatter_Sum_bf16_RING_LL(ncclDevComm*, unsigned long, ncclWork*)",
    "ncclDevKernel_AllGather_RING_LL(ncclDevComm*, unsigned long, ncclWork*)",
    "ncclDevKernel_Broadcast_RING_LL(ncclDevComm*, unsigned long, ncclWork*)",
    "ncclKernel_SendRecv_RING_SIMPLE_Sum_int8_t(ncclDevComm*, unsigned long, ncclWork*)"};

constexpr std::array<std::string_view, 3> kNcclAnnotations = {
    "nccl:all_reduce", "nccl:_reduce_scatter_base", "nccl:_all_gather_base"};

constexpr std::array<std::string_view, 5> kMemcpyNames = {
    "Memcpy HtoD (Pageable -> Device)", "Memcpy DtoH (Device -> Pageable)",
    "Memcpy DtoD (Device -> Device)", "Memcpy HtoD (Pinned -> Device)",
    "Memcpy DtoH (Device -> Pinned)"};

// Runtime calls that launch nothing (no flow, no GPU event).
constexpr std::array<std::string_view, 7> kRuntimeOnly = {
    "cudaEventRecord", "cudaStreamWaitEvent", "cudaStreamIsCapturing", "cudaDeviceGetAttribute",
    "cudaFuncGetAttributes", "cudaPeekAtLastError", "cudaPointerGetAttributes"};

// Python frames of `Call stack` (with_stack=True; the Python thread only).
constexpr std::array<std::string_view, 20> kFrames = {
    "/opt/conda/lib/python3.10/site-packages/torch/nn/modules/module.py(1527): _call_impl",
    "/opt/conda/lib/python3.10/site-packages/torch/nn/modules/module.py(1518): _wrapped_call_impl",
    "/opt/conda/lib/python3.10/site-packages/torch/nn/modules/linear.py(114): forward",
    "/opt/conda/lib/python3.10/site-packages/torch/nn/modules/normalization.py(196): forward",
    "/opt/conda/lib/python3.10/site-packages/torch/nn/modules/dropout.py(58): forward",
    "/opt/conda/lib/python3.10/site-packages/torch/nn/modules/activation.py(684): forward",
    "/opt/conda/lib/python3.10/site-packages/torch/nn/functional.py(1266): dropout",
    "/opt/conda/lib/python3.10/site-packages/torch/nn/functional.py(2543): layer_norm",
    "/opt/conda/lib/python3.10/site-packages/torch/nn/parallel/distributed.py(1519): _run_ddp_forward",
    "/opt/conda/lib/python3.10/site-packages/torch/nn/parallel/distributed.py(1581): forward",
    "/opt/conda/lib/python3.10/site-packages/torch/optim/adamw.py(184): step",
    "/opt/conda/lib/python3.10/site-packages/torch/optim/adamw.py(335): adamw",
    "/opt/conda/lib/python3.10/site-packages/torch/optim/optimizer.py(373): wrapper",
    "/opt/conda/lib/python3.10/site-packages/torch/utils/_contextlib.py(115): decorate_context",
    "/workspace/model/gpt.py(87): forward",
    "/workspace/model/gpt.py(132): forward",
    "/workspace/model/gpt.py(181): forward",
    "/workspace/model/attention.py(64): forward",
    "/workspace/model/mlp.py(31): forward",
    "/workspace/train.py(212): train_step"};

constexpr std::array<std::string_view, 7> kInputTypes = {
    "float", "c10::BFloat16", "long int", "Scalar", "bool", "int", ""};

constexpr std::array<int, 14> kDims = {1, 2, 4, 8, 16, 32, 64, 128, 512, 768, 1024, 2048, 4096, 50304};

// GPU streams: compute, two side streams, NCCL.
constexpr std::array<int, 4> kStreams = {7, 20, 24, 28};
constexpr int kNcclStream = 28;

// ---------------------------------------------------------------- output

constexpr int kCpuThreads = 2;  // the main (Python) thread and the autograd thread

// Append-only text buffer with std::to_chars number formatting.
class Out {
 public:
  void Reserve(size_t n) { s_.reserve(n); }
  Out& operator<<(std::string_view v) {
    s_.append(v);
    return *this;
  }
  Out& operator<<(char c) {
    s_.push_back(c);
    return *this;
  }
  Out& Int(int64_t v) {
    char b[24];
    auto r = std::to_chars(b, b + sizeof b, v);
    s_.append(b, r.ptr);
    return *this;
  }
  // A JSON string with a known-safe body.
  Out& Str(std::string_view v) {
    s_.push_back('"');
    s_.append(v);
    s_.push_back('"');
    return *this;
  }
  // Fixed-point `units / 10^decimals` with exactly `decimals` digits.
  Out& Fixed(int64_t units, int decimals) {
    int64_t scale = 1;
    for (int i = 0; i < decimals; ++i) scale *= 10;
    if (units < 0) {
      s_.push_back('-');
      units = -units;
    }
    Int(units / scale);
    if (decimals == 0) return *this;
    s_.push_back('.');
    char b[24];
    int64_t frac = units % scale;
    for (int i = decimals - 1; i >= 0; --i) {
      b[i] = static_cast<char>('0' + frac % 10);
      frac /= 10;
    }
    s_.append(b, decimals);
    return *this;
  }
  std::string& str() { return s_; }
  size_t size() const { return s_.size(); }

 private:
  std::string s_;
};

// ---------------------------------------------------------------- one rank

struct Config {
  int ranks = 8;
  int64_t events = 50000;
  uint64_t seed = 1;
  std::string out;
  bool gzip = false;
  int gzip_level = 6;
  int gpus_per_node = 8;
  std::string ts = "mixed";  // int | frac | mixed
  int jobs = 0;
};

constexpr int64_t kUs = 1000;  // ns per µs

// The sections of one file, reused from rank to rank by a worker thread (no
// fresh pages to fault in for every file).
struct Sections {
  Out cpu[kCpuThreads];  // per thread, flushed into cpu_all a few steps at a time
  Out cpu_all, runtime, gpu, flows, instants;
  void Clear() {
    for (auto& t : cpu) t.str().clear();
    for (Out* o : {&cpu_all, &runtime, &gpu, &flows, &instants}) o->str().clear();
  }
};

// Generates one rank's file content.
class RankWriter {
 public:
  RankWriter(const Config& c, int rank, Sections* sections)
      : c_(c),
        rank_(rank),
        rng_(c.seed * 0x100000001b3ULL + static_cast<uint64_t>(rank) * 0x9e3779b97f4a7c15ULL + 1),
        dev_(rank % c.gpus_per_node),
        pid_(4000 + rank),
        frac_(c.ts == "frac" || (c.ts == "mixed" && rank % 2 == 0)),
        cpu_(sections->cpu),
        cpu_all_(sections->cpu_all),
        runtime_(sections->runtime),
        gpu_(sections->gpu),
        flows_(sections->flows),
        instants_(sections->instants) {
    sections->Clear();
    tids_[0] = pid_;                                  // main thread: forward, optimizer
    tids_[1] = pid_ + 1000 + static_cast<int64_t>(rng_.Below(30000));  // autograd thread
    // Ranks start within a couple of ms of each other, like a real job.
    start_ns_ = 1682725897000000000LL + static_cast<int64_t>(c.seed % 1000) * 1000000LL * kUs +
                rng_.Range(0, 2000) * kUs + rng_.Range(0, 999);
  }

  // Number of events in the fixed trailer (metadata, Spans, Kineto's
  // string-pid instants).
  static int64_t FixedEvents(int gpus_per_node) {
    return 3 + 3 * gpus_per_node + 2 * (kCpuThreads + static_cast<int64_t>(kStreams.size())) + 4;
  }

  // Builds the whole file into `file`.
  void Build(std::string* file) {
    const int64_t fixed = FixedEvents(c_.gpus_per_node);
    remaining_ = c_.events - fixed;
    const size_t guess = static_cast<size_t>(c_.events) * 460;
    for (auto& t : cpu_) t.Reserve(guess / 4);
    runtime_.Reserve(guess / 6);
    gpu_.Reserve(guess / 4);
    flows_.Reserve(guess / 6);
    instants_.Reserve(guess / 16);
    cpu_all_.Reserve(guess / 2);

    for (auto& f : stream_free_) f = start_ns_;
    now_[0] = start_ns_ + rng_.Range(50, 400) * kUs;
    now_[1] = now_[0];
    int64_t step = 0;
    while (remaining_ > 0) Iteration(step++);
    FlushCpu();
    end_ns_ = std::max({now_[0], now_[1], stream_free_[0], stream_free_[1], stream_free_[2],
                        stream_free_[3]}) +
              50 * kUs;

    Out head;
    Header(&head);
    Out tail;
    Trailer(&tail);
    file->clear();
    file->reserve(head.size() + cpu_all_.size() + runtime_.size() + gpu_.size() + flows_.size() +
                  instants_.size() + tail.size());
    file->append(head.str());
    file->append(cpu_all_.str());
    file->append(runtime_.str());
    file->append(gpu_.str());
    file->append(flows_.str());
    file->append(instants_.str());
    file->append(tail.str());
  }

 private:
  // --- timestamps

  void Ts(Out& o, int64_t ns) {
    if (frac_) {
      o.Fixed(ns, 3);
    } else {
      o.Int(ns / kUs);
    }
  }
  void Dur(Out& o, int64_t ns) {
    if (frac_) {
      o.Fixed(ns, 3);
    } else {
      o.Int(ns / kUs);
    }
  }

  // --- events (each written as `  {...},\n`; the trailer closes the array)

  void BeginX(Out& o, std::string_view cat, std::string_view name, int64_t pid, int64_t tid,
              int64_t ts, int64_t dur) {
    o << "  {\n    \"ph\": \"X\", \"cat\": ";
    o.Str(cat) << ", \"name\": ";
    o.Str(name) << ", \"pid\": ";
    o.Int(pid) << ", \"tid\": ";
    o.Int(tid) << ",\n    \"ts\": ";
    Ts(o, ts);
    o << ", \"dur\": ";
    Dur(o, dur);
    o << ",\n    \"args\": {\n      ";
  }
  static void EndEvent(Out& o) { o << "\n    }\n  },\n"; }

  // Kineto's `Input Dims` / `Input type` / `Input Strides` / `Concrete Inputs`.
  void ShapeArgs(Out& o) {
    const int n = 1 + static_cast<int>(rng_.Below(4));
    int dims[4][4];
    int ranks[4];
    for (int i = 0; i < n; ++i) {
      ranks[i] = static_cast<int>(rng_.Below(4));
      for (int d = 0; d < ranks[i]; ++d) dims[i][d] = rng_.Pick(kDims);
    }
    o << ", \"Input Dims\": [";
    for (int i = 0; i < n; ++i) {
      if (i) o << ", ";
      o << '[';
      for (int d = 0; d < ranks[i]; ++d) {
        if (d) o << ", ";
        o.Int(dims[i][d]);
      }
      o << ']';
    }
    o << "], \"Input type\": [";
    for (int i = 0; i < n; ++i) {
      if (i) o << ", ";
      o.Str(ranks[i] ? kInputTypes[rng_.Below(3)] : kInputTypes[3 + rng_.Below(4)]);
    }
    o << "], \"Input Strides\": [";
    for (int i = 0; i < n; ++i) {
      if (i) o << ", ";
      o << '[';
      int64_t stride = 1;
      int64_t strides[4];
      for (int d = ranks[i] - 1; d >= 0; --d) {
        strides[d] = stride;
        stride *= dims[i][d];
      }
      for (int d = 0; d < ranks[i]; ++d) {
        if (d) o << ", ";
        o.Int(strides[d]);
      }
      o << ']';
    }
    o << "], \"Concrete Inputs\": [";
    for (int i = 0; i < n; ++i) {
      if (i) o << ", ";
      if (ranks[i] == 0 && rng_.Percent(50)) {
        o << '"';
        o.Int(rng_.Range(0, 8));
        o << '"';
      } else {
        o << "\"\"";
      }
    }
    o << ']';
  }

  void CpuOpEvent(int th, std::string_view cat, std::string_view name, int64_t ts, int64_t dur,
                  bool shapes, int64_t seq) {
    Out& o = cpu_[th];
    BeginX(o, cat, name, pid_, tids_[th], ts, dur);
    o << "\"External id\": ";
    o.Int(++external_id_) << ",\"Record function id\": ";
    o.Int(++record_function_id_);
    if (seq >= 0) {
      o << ", \"Sequence number\": ";
      o.Int(seq) << ", \"Fwd thread id\": 1";
    }
    o << ", \"Ev Idx\": ";
    o.Int(ev_idx_++);
    if (shapes) ShapeArgs(o);
    if (th == 0 && cat == "cpu_op") {
      o << ", \"Call stack\": \"";
      const uint32_t frames = 3 + rng_.Below(5);
      for (uint32_t i = 0; i < frames; ++i) o << rng_.Pick(kFrames) << ';';
      o << "/workspace/train.py(268): main;train.py(301): <module>\"";
    }
    EndEvent(o);
  }

  // A kernel (or memcpy/memset) launched at `at` from thread `th`: a runtime
  // event, the GPU event and an ac2g flow pair (4 events).
  int64_t Launch(int th, int64_t at, int kind) {
    const int64_t corr = ++correlation_;
    const int64_t ext = external_id_;
    const int64_t rt_dur = rng_.Range(3000, 18000);
    std::string_view rt_name = kind == 1   ? std::string_view("cudaMemcpyAsync")
                               : kind == 2 ? std::string_view("cudaMemsetAsync")
                               : rng_.Percent(90) ? std::string_view("cudaLaunchKernel")
                                                  : std::string_view("cudaLaunchKernelExC");
    const int cbid = kind == 1 ? 41 : kind == 2 ? 51 : rt_name == "cudaLaunchKernel" ? 211 : 430;
    BeginX(runtime_, "cuda_runtime", rt_name, pid_, tids_[th], at, rt_dur);
    runtime_ << "\"External id\": ";
    runtime_.Int(ext) << ",      \"cbid\": ";
    runtime_.Int(cbid) << ", \"correlation\": ";
    runtime_.Int(corr);
    EndEvent(runtime_);

    const int si = kind == 3 ? 3 : rng_.Percent(85) ? 0 : 1 + static_cast<int>(rng_.Below(2));
    const int stream = kStreams[si];
    int64_t k_ts = std::max(stream_free_[si] + rng_.Range(1000, 4000), at + rng_.Range(6000, 40000));
    int64_t k_dur;
    std::string_view cat, name;
    if (kind == 1) {
      cat = "gpu_memcpy";
      name = rng_.Pick(kMemcpyNames);
      k_dur = rng_.Range(1500, 60000);
    } else if (kind == 2) {
      cat = "gpu_memset";
      name = "Memset (Device)";
      k_dur = rng_.Range(1000, 8000);
    } else if (kind == 3) {
      cat = "kernel";
      name = rng_.Pick(kNcclKernels);
      k_dur = rng_.Range(20000, 900000);
    } else {
      cat = "kernel";
      name = rng_.Pick(kKernels);
      k_dur = rng_.Percent(80) ? rng_.Range(1500, 40000) : rng_.Range(40000, 600000);
    }
    stream_free_[si] = k_ts + k_dur;
    BeginX(gpu_, cat, name, dev_, stream, k_ts, k_dur);
    gpu_ << "\"External id\": ";
    gpu_.Int(ext) << ",      \"queued\": 0, \"device\": ";
    gpu_.Int(dev_) << ", \"context\": 1,      \"stream\": ";
    gpu_.Int(stream) << ", \"correlation\": ";
    gpu_.Int(corr);
    if (kind == 1 || kind == 2) {
      const int64_t bytes = int64_t{1} << rng_.Range(2, 27);
      gpu_ << ",      \"bytes\": ";
      gpu_.Int(bytes) << ", \"memory bandwidth (GB/s)\": ";
      gpu_.Fixed(bytes * 1000000 / std::max<int64_t>(k_dur, 1), 6);  // bytes/ns = GB/s
    } else {
      const int64_t grid = int64_t{1} << rng_.Range(0, 14);
      const int64_t block = int64_t{32} << rng_.Range(0, 5);
      constexpr int64_t kSms = 132;
      gpu_ << ",      \"registers per thread\": ";
      gpu_.Int(16 + 8 * rng_.Range(0, 28)) << ",      \"shared memory\": ";
      gpu_.Int(rng_.Percent(50) ? 0 : 1024 * rng_.Range(1, 200)) << ",      \"blocks per SM\": ";
      gpu_.Fixed(grid * 1000000 / kSms, 6) << ",      \"warps per SM\": ";
      gpu_.Fixed(grid * (block / 32) * 1000000 / kSms, 6) << ",      \"grid\": [";
      gpu_.Int(grid) << ", 1, 1],      \"block\": [";
      gpu_.Int(block) << ", 1, 1],      \"est. achieved occupancy %\": ";
      gpu_.Int(rng_.Range(0, 100));
    }
    EndEvent(gpu_);

    flows_ << "  {\n    \"ph\": \"s\", \"id\": ";
    flows_.Int(corr) << ", \"pid\": ";
    flows_.Int(pid_) << ", \"tid\": ";
    flows_.Int(tids_[th]) << ", \"ts\": ";
    Ts(flows_, at);
    flows_ << ",\n    \"cat\": \"ac2g\", \"name\": \"ac2g\"\n  },\n";
    flows_ << "  {\n    \"ph\": \"f\", \"id\": ";
    flows_.Int(corr) << ", \"pid\": ";
    flows_.Int(dev_) << ", \"tid\": ";
    flows_.Int(stream) << ", \"ts\": ";
    Ts(flows_, k_ts);
    flows_ << ",\n    \"cat\": \"ac2g\", \"name\": \"ac2g\", \"bp\": \"e\"\n  },\n";
    remaining_ -= 4;
    return at + rt_dur;
  }

  void RuntimeOnly(int th, int64_t at) {
    BeginX(runtime_, "cuda_runtime", rng_.Pick(kRuntimeOnly), pid_, tids_[th], at,
           rng_.Range(500, 4000));
    runtime_ << "\"External id\": ";
    runtime_.Int(external_id_) << ",      \"cbid\": ";
    runtime_.Int(rng_.Range(1, 400)) << ", \"correlation\": ";
    runtime_.Int(++correlation_);
    EndEvent(runtime_);
    --remaining_;
  }

  void MemoryInstant(int th, int64_t at) {
    Out& o = instants_;
    o << "  {\n    \"ph\": \"i\", \"cat\": \"cpu_instant_event\", \"s\": \"t\", \"name\": \"[memory]\",\n"
         "    \"pid\": ";
    o.Int(pid_) << ", \"tid\": ";
    o.Int(tids_[th]) << ",\n    \"ts\": ";
    Ts(o, at);
    const int64_t bytes = (rng_.Percent(20) ? -1 : 1) * (int64_t{512} << rng_.Range(0, 20));
    allocated_ = std::max<int64_t>(0, allocated_ + bytes);
    o << ",\n    \"args\": {\n      \"Total Reserved\": ";
    o.Int(allocated_ + (int64_t{1} << 31)) << ", \"Total Allocated\": ";
    o.Int(allocated_) << ", \"Bytes\": ";
    o.Int(bytes) << ", \"Addr\": ";
    o.Int(139800000000000LL + rng_.Range(0, 1LL << 36)) << ", \"Device Id\": ";
    o.Int(dev_) << ", \"Device Type\": 1";
    EndEvent(o);
    --remaining_;
  }

  // A CPU op and its subtree on thread `th`, starting at `start`; written
  // after its children (completion order). Returns its end.
  int64_t Op(int th, std::string_view name, int depth, int64_t start, int64_t seq, bool may_launch) {
    if (remaining_ <= 0) return start;
    --remaining_;  // this op, written once its children are
    int64_t t = start + rng_.Range(1000, 6000);
    if (remaining_ > 0 && rng_.Percent(12)) {
      MemoryInstant(th, t);
      t += rng_.Range(200, 1500);
    }
    const uint32_t children = depth >= 3 ? 0 : rng_.Below(depth == 0 ? 4 : 3);
    for (uint32_t i = 0; i < children && remaining_ > 0; ++i) {
      std::string_view child = th == 1 ? rng_.Pick(kBackwardOps) : rng_.Pick(kAtenOps);
      t = Op(th, child, depth + 1, t, -1, may_launch) + rng_.Range(500, 3000);
    }
    if (children == 0 && may_launch) {
      if (remaining_ >= 4 && rng_.Percent(65)) {
        const int kind = rng_.Percent(92) ? 0 : rng_.Percent(60) ? 1 : 2;
        t = Launch(th, t + rng_.Range(2000, 9000), kind);
      } else if (remaining_ >= 1 && rng_.Percent(25)) {
        RuntimeOnly(th, t + rng_.Range(1000, 5000));
        t += rng_.Range(2000, 6000);
      } else {
        t += rng_.Range(2000, 30000);
      }
    }
    const int64_t end = t + rng_.Range(1000, 8000);
    CpuOpEvent(th, "cpu_op", name, start, end - start, depth > 0 || children == 0, seq);
    return end;
  }

  // A user annotation (cat user_annotation) around `body`.
  template <typename Body>
  int64_t Annotated(int th, std::string_view name, int64_t start, Body body) {
    if (remaining_ <= 0) return start;
    --remaining_;
    int64_t end = body(start + rng_.Range(1000, 4000)) + rng_.Range(1000, 4000);
    CpuOpEvent(th, "user_annotation", name, start, end - start, false, -1);
    return end;
  }

  void Iteration(int64_t step) {
    char step_name[32];
    auto r = std::to_chars(step_name, step_name + sizeof step_name, step);
    std::string name = "ProfilerStep#" + std::string(step_name, r.ptr);
    constexpr int kLayers = 24;
    // Forward and optimizer on the main thread, backward on the autograd
    // thread, as in torch.autograd.
    now_[0] = Annotated(0, name, now_[0], [&](int64_t t) {
      t = Annotated(0, "## forward ##", t, [&](int64_t t) {
        for (int layer = 0; layer < kLayers && remaining_ > 0; ++layer) {
          const int ops = 8 + static_cast<int>(rng_.Below(8));
          for (int i = 0; i < ops && remaining_ > 0; ++i)
            t = Op(0, rng_.Pick(kAtenOps), 0, t, ++seq_nr_, true) + rng_.Range(2000, 15000);
        }
        return t;
      });
      now_[1] = std::max(now_[1], t + rng_.Range(20000, 80000));
      now_[1] = Annotated(1, "## backward ##", now_[1], [&](int64_t t) {
        for (int layer = 0; layer < kLayers && remaining_ > 0; ++layer) {
          const int nodes = 6 + static_cast<int>(rng_.Below(6));
          for (int i = 0; i < nodes && remaining_ > 0; ++i) {
            std::string_view node = rng_.Pick(kBackwardNodes);
            std::string eval = "autograd::engine::evaluate_function: " + std::string(node);
            const int64_t seq = seq_nr_ - rng_.Range(0, 300);
            // evaluate_function -> node -> ops (the node is written first,
            // as Kineto does: both end together).
            if (remaining_ < 2) {
              t = Op(1, node, 1, t, seq, true);
              continue;
            }
            --remaining_;  // the evaluate_function wrapper
            const int64_t start = t;
            const int64_t end = Op(1, node, 1, t + rng_.Range(500, 2000), seq, true) +
                                rng_.Range(500, 3000);
            CpuOpEvent(1, "cpu_op", eval, start, end - start, false, seq);
            t = end + rng_.Range(1000, 6000);
          }
          if (remaining_ > 0 && layer % 4 == 3) {
            t = Annotated(1, rng_.Pick(kNcclAnnotations), t, [&](int64_t t) {
              if (remaining_ >= 4) t = Launch(1, t + rng_.Range(5000, 20000), 3);
              return t;
            });
          }
        }
        return t;
      });
      t = std::max(t, now_[1]) + rng_.Range(5000, 20000);
      t = Annotated(0, "Optimizer.step#AdamW.step", t, [&](int64_t t) {
        const int ops = 10 + static_cast<int>(rng_.Below(10));
        for (int i = 0; i < ops && remaining_ > 0; ++i)
          t = Op(0, rng_.Pick(kOptimizerOps), 1, t, -1, true) + rng_.Range(1000, 5000);
        return t;
      });
      return t;
    });
    now_[1] = std::max(now_[1], now_[0]);
    // Kineto's CPU buffers come out a few steps at a time.
    if (step % 2 == 1) FlushCpu();
  }

  void FlushCpu() {
    for (auto& t : cpu_) {
      cpu_all_ << t.str();
      t.str().clear();
    }
  }

  // --- file head and tail

  void Header(Out* o) {
    *o << "{\n  \"schemaVersion\": 1,\n  \"deviceProperties\": [\n";
    for (int d = 0; d < c_.gpus_per_node; ++d) {
      *o << "    {\n      \"id\": ";
      o->Int(d) << ", \"name\": \"NVIDIA H100 80GB HBM3\", \"totalGlobalMem\": 85029158912,\n"
                   "      \"computeMajor\": 9, \"computeMinor\": 0,\n"
                   "      \"maxThreadsPerBlock\": 1024, \"maxThreadsPerMultiprocessor\": 2048,\n"
                   "      \"regsPerBlock\": 65536, \"warpSize\": 32,\n"
                   "      \"sharedMemPerBlock\": 49152, \"numSms\": 132\n"
                   "    , \"regsPerMultiprocessor\": 65536, \"sharedMemPerBlockOptin\": 232448, "
                   "\"sharedMemPerMultiprocessor\": 233472\n    }";
      *o << (d + 1 < c_.gpus_per_node ? ",\n" : "\n");
    }
    *o << "  ],\n  \"distributedInfo\": {\"backend\": \"nccl\", \"rank\": ";
    o->Int(rank_) << ", \"world_size\": ";
    o->Int(c_.ranks) << "},\n  \"record_shapes\": 1,\n  \"traceEvents\": [\n";
  }

  void Meta(Out& o, std::string_view name, std::string_view pid, int64_t tid, std::string_view key,
            std::string_view str_value, int64_t int_value, bool last = false) {
    o << "  {\n    \"name\": ";
    o.Str(name) << ", \"ph\": \"M\", \"ts\": ";
    Ts(o, start_ns_);
    o << ", \"pid\": " << pid << ", \"tid\": ";
    o.Int(tid) << ",\n    \"args\": {\n      ";
    o.Str(key) << ": ";
    if (str_value.data())
      o.Str(str_value);
    else
      o.Int(int_value);
    o << (last ? "\n    }\n  }\n" : "\n    }\n  },\n");
  }

  void Trailer(Out* o) {
    auto num = [](int64_t v) {
      char b[24];
      auto r = std::to_chars(b, b + sizeof b, v);
      return std::string(b, r.ptr);
    };
    const std::string cpu_pid = num(pid_);
    Meta(*o, "process_name", cpu_pid, 0, "name", "python3.10", 0);
    Meta(*o, "process_labels", cpu_pid, 0, "labels", "CPU", 0);
    Meta(*o, "process_sort_index", cpu_pid, 0, "sort_index", {}, pid_);
    for (int d = 0; d < c_.gpus_per_node; ++d) {
      const std::string p = num(d);
      const std::string label = "GPU " + p;
      Meta(*o, "process_name", p, 0, "name", "python3.10", 0);
      Meta(*o, "process_labels", p, 0, "labels", label, 0);
      Meta(*o, "process_sort_index", p, 0, "sort_index", {}, 16777216 + d);
    }
    for (int th = 0; th < kCpuThreads; ++th) {
      const std::string label = "thread " + num(tids_[th]) + " (python3.10)";
      Meta(*o, "thread_name", cpu_pid, tids_[th], "name", label, 0);
      Meta(*o, "thread_sort_index", cpu_pid, tids_[th], "sort_index", {}, tids_[th]);
    }
    const std::string dev = num(dev_);
    for (int s : kStreams) {
      const std::string label = "stream " + num(s) + " ";
      Meta(*o, "thread_name", dev, s, "name", label, 0);
      Meta(*o, "thread_sort_index", dev, s, "sort_index", {}, s);
    }
    *o << "  {\n    \"ph\": \"X\", \"cat\": \"Trace\", \"ts\": ";
    Ts(*o, start_ns_);
    *o << ", \"dur\": ";
    Dur(*o, end_ns_ - start_ns_);
    *o << ",\n    \"pid\": \"Spans\", \"tid\": \"PyTorch Profiler\",\n"
          "    \"name\": \"PyTorch Profiler (0)\",\n    \"args\": {\n      \"Op count\": 0\n    }\n  },\n";
    Meta(*o, "process_sort_index", "\"Spans\"", 0, "sort_index", {}, 536870912);
    *o << "  {\n    \"name\": \"Iteration Start: PyTorch Profiler\", \"ph\": \"i\", \"s\": \"g\",\n"
          "    \"pid\": \"Traces\", \"tid\": \"Trace PyTorch Profiler\", \"ts\": ";
    Ts(*o, start_ns_);
    *o << "\n  },\n  {\n    \"name\": \"Record Window End\", \"ph\": \"i\", \"s\": \"g\",\n"
          "    \"pid\": \"\", \"tid\": \"\", \"ts\": ";
    Ts(*o, end_ns_);
    *o << "\n  }\n  ],\n  \"traceName\": \"/tmp/rank";
    o->Int(rank_) << ".pt.trace.json\",\n  \"displayTimeUnit\": \"ms\"\n}\n";
  }

  const Config& c_;
  const int rank_;
  Rng rng_;
  const int dev_;
  const int64_t pid_;
  const bool frac_;
  int64_t tids_[kCpuThreads];
  int64_t start_ns_ = 0, end_ns_ = 0;
  int64_t now_[kCpuThreads] = {};
  std::array<int64_t, kStreams.size()> stream_free_{};
  int64_t remaining_ = 0;
  int64_t external_id_ = 0, record_function_id_ = 0, ev_idx_ = 0, correlation_ = 0, seq_nr_ = 0;
  int64_t allocated_ = 0;
  Out (&cpu_)[kCpuThreads];
  Out& cpu_all_;
  Out& runtime_;
  Out& gpu_;
  Out& flows_;
  Out& instants_;
};

// ---------------------------------------------------------------- files

bool WriteAll(const std::string& path, const char* data, size_t size, std::string* err) {
  std::string tmp = path + ".partial";
  FILE* f = std::fopen(tmp.c_str(), "wb");
  if (!f) {
    *err = "cannot create " + tmp + ": " + std::strerror(errno);
    return false;
  }
  bool ok = std::fwrite(data, 1, size, f) == size;
  ok = (std::fclose(f) == 0) && ok;
  if (!ok || std::rename(tmp.c_str(), path.c_str()) != 0) {
    *err = "cannot write " + path + ": " + std::strerror(errno);
    std::remove(tmp.c_str());
    return false;
  }
  return true;
}

struct Totals {
  std::atomic<uint64_t> json_bytes{0};
  std::atomic<uint64_t> file_bytes{0};
  std::mutex mu;
  std::string error;
};

void Worker(const Config& c, std::atomic<int>* next, Totals* totals) {
  std::string json;
  std::vector<char> gz;
  Sections sections;
  libdeflate_compressor* comp = c.gzip ? libdeflate_alloc_compressor(c.gzip_level) : nullptr;
  while (true) {
    const int r = next->fetch_add(1);
    if (r >= c.ranks) break;
    RankWriter(c, r, &sections).Build(&json);
    std::string path = c.out + "/rank" + std::to_string(r) + ".pt.trace.json";
    const char* data = json.data();
    size_t size = json.size();
    if (comp) {
      gz.resize(libdeflate_gzip_compress_bound(comp, json.size()));
      size = libdeflate_gzip_compress(comp, json.data(), json.size(), gz.data(), gz.size());
      data = gz.data();
      path += ".gz";
    }
    std::string err;
    if (size == 0) err = "gzip compression failed for " + path;
    if (err.empty()) WriteAll(path, data, size, &err);
    if (!err.empty()) {
      std::lock_guard<std::mutex> lock(totals->mu);
      if (totals->error.empty()) totals->error = err;
      break;
    }
    totals->json_bytes += json.size();
    totals->file_bytes += size;
  }
  if (comp) libdeflate_free_compressor(comp);
}

}  // namespace

int main(int argc, char** argv) {
  Config c;
  CLI::App app{
      "gen_kineto: write synthetic Kineto-like (PyTorch profiler) rank files, seeded and "
      "deterministic, in Kineto's sectional, unsorted order."};
  app.add_option("--ranks", c.ranks, "Number of rank files")->check(CLI::Range(1, 1 << 20));
  app.add_option("--events", c.events, "Trace events per file (metadata included)")
      ->check(CLI::Range(int64_t{1}, int64_t{1} << 40));
  app.add_option("--seed", c.seed, "Random seed: the same seed writes the same bytes");
  app.add_option("--out", c.out, "Output directory (created if missing)")->required();
  app.add_flag("--gzip", c.gzip, "Write rank<r>.pt.trace.json.gz (one gzip member, libdeflate)");
  app.add_option("--gzip-level", c.gzip_level, "libdeflate level")->check(CLI::Range(1, 12));
  app.add_option("--gpus-per-node", c.gpus_per_node,
                 "deviceProperties entries; a rank's GPU pid is rank % gpus-per-node")
      ->check(CLI::Range(1, 1024));
  app.add_option("--ts", c.ts,
                 "int: integer µs (older Kineto); frac: µs with 3 decimals (Kineto 2.x); mixed: "
                 "frac on even ranks, int on odd ranks")
      ->check(CLI::IsMember({"int", "frac", "mixed"}));
  app.add_option("--jobs", c.jobs, "Worker threads (default: hardware threads); output is the same");
  CLI11_PARSE(app, argc, argv);

  const int64_t fixed = RankWriter::FixedEvents(c.gpus_per_node);
  if (c.events <= fixed) {
    std::fprintf(stderr, "gen_kineto: --events must be more than %lld (the metadata of one file)\n",
                 static_cast<long long>(fixed));
    return 2;
  }
  std::error_code ec;
  std::filesystem::create_directories(c.out, ec);
  if (ec) {
    std::fprintf(stderr, "gen_kineto: cannot create %s: %s\n", c.out.c_str(), ec.message().c_str());
    return 1;
  }
  const auto t0 = std::chrono::steady_clock::now();
  int jobs = c.jobs > 0 ? c.jobs : static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  jobs = std::min(jobs, c.ranks);
  std::atomic<int> next{0};
  Totals totals;
  std::vector<std::thread> workers;
  for (int j = 1; j < jobs; ++j) workers.emplace_back(Worker, std::cref(c), &next, &totals);
  Worker(c, &next, &totals);
  for (auto& w : workers) w.join();
  if (!totals.error.empty()) {
    std::fprintf(stderr, "gen_kineto: %s\n", totals.error.c_str());
    return 1;
  }
  const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  std::printf(
      "{\"files\": %d, \"events_per_file\": %lld, \"events\": %lld, \"json_bytes\": %llu, "
      "\"file_bytes\": %llu, \"gzip\": %s, \"seed\": %llu, \"seconds\": %.3f}\n",
      c.ranks, static_cast<long long>(c.events), static_cast<long long>(c.events) * c.ranks,
      static_cast<unsigned long long>(totals.json_bytes.load()),
      static_cast<unsigned long long>(totals.file_bytes.load()), c.gzip ? "true" : "false",
      static_cast<unsigned long long>(c.seed), secs);
  return 0;
}
