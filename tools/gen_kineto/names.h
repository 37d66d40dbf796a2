#pragma once
// The names gen_kineto draws from: ATen ops, autograd nodes, kernels, NCCL,
// memcpys, runtime calls, Python frames, input types and sizes, streams.
#include <array>
#include <string_view>

namespace tracemill::tools::gen_kineto {

// ASCII only, no quotes or backslashes: written as JSON string bodies as is.

inline constexpr std::array<std::string_view, 84> kAtenOps = {
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

inline constexpr std::array<std::string_view, 34> kBackwardNodes = {
    "MmBackward0", "AddmmBackward0", "BmmBackward0", "MulBackward0", "AddBackward0",
    "DivBackward0", "SubBackward0", "ViewBackward0", "TBackward0", "TransposeBackward0",
    "PermuteBackward0", "UnsafeViewBackward0", "ReshapeAliasBackward0", "ExpandBackward0",
    "CloneBackward0", "SoftmaxBackward0", "LogSoftmaxBackward0", "GeluBackward0",
    "SiluBackward0", "NativeLayerNormBackward0", "NativeDropoutBackward0", "EmbeddingBackward0",
    "ScaledDotProductFlashAttentionBackward0", "SumBackward0", "MeanBackward0", "CatBackward0",
    "SplitBackward0", "SliceBackward0", "SelectBackward0", "NllLossBackward0",
    "ToCopyBackward0", "WhereBackward0", "RsqrtBackward0", "torch::autograd::AccumulateGrad"};

inline constexpr std::array<std::string_view, 12> kBackwardOps = {
    "aten::mm", "aten::mul", "aten::sum", "aten::add_", "aten::_softmax_backward_data",
    "aten::gelu_backward", "aten::native_layer_norm_backward", "aten::native_dropout_backward",
    "aten::embedding_dense_backward", "aten::_flash_attention_backward", "aten::view",
    "aten::detach"};

inline constexpr std::array<std::string_view, 10> kOptimizerOps = {
    "aten::_foreach_add_", "aten::_foreach_mul_", "aten::_foreach_addcmul_",
    "aten::_foreach_addcdiv_", "aten::_foreach_sqrt", "aten::_foreach_div_",
    "aten::_foreach_lerp_", "aten::_foreach_norm", "aten::_fused_adamw_", "aten::clamp_"};

inline constexpr std::array<std::string_view, 44> kKernels = {
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

inline constexpr std::array<std::string_view, 6> kNcclKernels = {
    "ncclDevKernel_AllReduce_Sum_bf16_RING_LL(ncclDevComm*, unsigned long, ncclWork*)",
    "ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevComm*, unsigned long, ncclWork*)",
    "ncclDevKernel_ReduceScatter_Sum_bf16_RING_LL(ncclDevComm*, unsigned long, ncclWork*)",
    "ncclDevKernel_AllGather_RING_LL(ncclDevComm*, unsigned long, ncclWork*)",
    "ncclDevKernel_Broadcast_RING_LL(ncclDevComm*, unsigned long, ncclWork*)",
    "ncclKernel_SendRecv_RING_SIMPLE_Sum_int8_t(ncclDevComm*, unsigned long, ncclWork*)"};

inline constexpr std::array<std::string_view, 3> kNcclAnnotations = {
    "nccl:all_reduce", "nccl:_reduce_scatter_base", "nccl:_all_gather_base"};

inline constexpr std::array<std::string_view, 5> kMemcpyNames = {
    "Memcpy HtoD (Pageable -> Device)", "Memcpy DtoH (Device -> Pageable)",
    "Memcpy DtoD (Device -> Device)", "Memcpy HtoD (Pinned -> Device)",
    "Memcpy DtoH (Device -> Pinned)"};

// Runtime calls that launch nothing (no flow, no GPU event).
inline constexpr std::array<std::string_view, 7> kRuntimeOnly = {
    "cudaEventRecord", "cudaStreamWaitEvent", "cudaStreamIsCapturing", "cudaDeviceGetAttribute",
    "cudaFuncGetAttributes", "cudaPeekAtLastError", "cudaPointerGetAttributes"};

// Python frames of `Call stack` (with_stack=True; the Python thread only).
inline constexpr std::array<std::string_view, 20> kFrames = {
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

inline constexpr std::array<std::string_view, 7> kInputTypes = {
    "float", "c10::BFloat16", "long int", "Scalar", "bool", "int", ""};

inline constexpr std::array<int, 14> kDims = {1, 2, 4, 8, 16, 32, 64, 128, 512, 768, 1024, 2048, 4096, 50304};

// GPU streams: compute, two side streams, NCCL.
inline constexpr std::array<int, 4> kStreams = {7, 20, 24, 28};
inline constexpr int kNcclStream = 28;

}  // namespace tracemill::tools::gen_kineto
