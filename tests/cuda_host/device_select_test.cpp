// --device parsing and resolution (executor/device_select.h): cpu always serves; cuda without a
// CUDA build, a GPU or a supported model fails with a message naming --device; auto falls back
// to cpu and says why.
#include <gtest/gtest.h>

#include <stdexcept>
#include <string>

#include "executor/device_select.h"

namespace ps {
namespace {

CudaAvailability gpu() {
  return CudaAvailability{true, 1, "NVIDIA H200"};
}
CudaAvailability no_gpu() {
  return CudaAvailability{true, 0, "CUDA runtime: no CUDA-capable device is detected"};
}
CudaAvailability not_built() {
  return CudaAvailability{};
}

std::string error_of(Device d, const CudaAvailability& a, const std::string& reason) {
  try {
    resolve_device(d, a, reason);
  } catch (const std::runtime_error& e) {
    return e.what();
  }
  return "";
}

ModelConfig qwen3_0_6b() {
  ModelConfig c;
  c.set_model_type("qwen3");
  c.hidden_size = 1024;
  c.num_hidden_layers = 28;
  c.num_attention_heads = 16;
  c.num_key_value_heads = 8;
  c.head_dim = 128;
  c.intermediate_size = 3072;
  c.vocab_size = 151936;
  return c;
}

TEST(DeviceSelect, ParsesTheThreeNamesAndRejectsOthers) {
  EXPECT_EQ(parse_device("auto"), Device::auto_select);
  EXPECT_EQ(parse_device("cpu"), Device::cpu);
  EXPECT_EQ(parse_device("cuda"), Device::cuda);
  for (const char* bad : {"", "CUDA", "gpu", "cuda:0"}) {
    EXPECT_THROW(parse_device(bad), std::invalid_argument) << bad;
  }
  try {
    parse_device("tpu");
  } catch (const std::invalid_argument& e) {
    EXPECT_STREQ(e.what(), "unknown device 'tpu' (choose auto, cpu or cuda)");
  }
  for (Device d : {Device::auto_select, Device::cpu, Device::cuda}) {
    EXPECT_EQ(parse_device(device_name(d)), d);
  }
}

TEST(DeviceSelect, CpuIsCpuWhateverTheMachine) {
  for (const auto& a : {gpu(), no_gpu(), not_built()}) {
    std::string note = "untouched";
    EXPECT_EQ(resolve_device(Device::cpu, a, "", &note), Device::cpu);
    EXPECT_EQ(note, "untouched");
  }
}

TEST(DeviceSelect, CudaWithoutAGpuFailsNamingTheFlag) {
  const std::string e = error_of(Device::cuda, no_gpu(), "");
  EXPECT_EQ(e.rfind("--device cuda: no CUDA GPU is visible (CUDA runtime: no CUDA-capable", 0), 0u)
      << e;
  EXPECT_NE(e.find("use --device cpu"), std::string::npos) << e;
  const std::string b = error_of(Device::cuda, not_built(), "");
  EXPECT_NE(b.find("--device cuda: this pagedserve was built without CUDA"), std::string::npos);
  EXPECT_NE(b.find("-DPAGEDSERVE_CUDA=ON"), std::string::npos) << b;
}

TEST(DeviceSelect, CudaWithAGpuAndASupportedModelIsCuda) {
  EXPECT_EQ(resolve_device(Device::cuda, gpu(), ""), Device::cuda);
  EXPECT_EQ(resolve_device(Device::auto_select, gpu(), ""), Device::cuda);
}

TEST(DeviceSelect, UnsupportedModelFailsForCudaAndFallsBackForAuto) {
  const std::string e = error_of(Device::cuda, gpu(), "MoE layers (qwen3_moe) run on the CPU only");
  EXPECT_NE(e.find("--device cuda: the model needs what the CUDA executor does not do yet: MoE"),
            std::string::npos)
      << e;
  std::string note;
  EXPECT_EQ(resolve_device(Device::auto_select, gpu(), "MoE layers", &note), Device::cpu);
  EXPECT_NE(note.find("--device auto chose cpu: the model needs"), std::string::npos) << note;
}

TEST(DeviceSelect, AutoWithoutAGpuIsCpuAndSaysWhy) {
  std::string note;
  EXPECT_EQ(resolve_device(Device::auto_select, no_gpu(), "", &note), Device::cpu);
  EXPECT_EQ(note.rfind("--device auto chose cpu: no CUDA GPU is visible", 0), 0u) << note;
  EXPECT_EQ(resolve_device(Device::auto_select, not_built(), "", &note), Device::cpu);
  EXPECT_NE(note.find("built without CUDA"), std::string::npos) << note;
  EXPECT_EQ(resolve_device(Device::auto_select, no_gpu(), ""), Device::cpu);  // note optional
}

TEST(DeviceSelect, TheProbeNeverReportsADeviceItCannotName) {
  // Whatever this machine has: a count > 0 comes with the device's name, 0 with the reason.
  const CudaAvailability a = probe_cuda();
  EXPECT_GE(a.device_count, 0);
  if (!a.built_with_cuda) {
    EXPECT_EQ(a.device_count, 0);
  } else {
    EXPECT_FALSE(a.detail.empty());
  }
}

TEST(CudaSupport, Qwen3ShapesAreSupported) {
  EXPECT_EQ(cuda_unsupported_reason(qwen3_0_6b(), {}), "");
  ModelConfig llama = qwen3_0_6b();
  llama.set_model_type("llama");
  llama.head_dim = 64;
  EXPECT_EQ(cuda_unsupported_reason(llama, {}), "");
  ModelConfig qwen2 = qwen3_0_6b();
  qwen2.set_model_type("qwen2");  // q/k/v bias: an add kernel after the fused GEMM
  EXPECT_EQ(cuda_unsupported_reason(qwen2, {}), "");
}

TEST(CudaSupport, NamesWhatItCannotRun) {
  ModelConfig moe = qwen3_0_6b();
  moe.model_type = "qwen3_moe";
  moe.moe.num_experts = 8;
  EXPECT_EQ(cuda_unsupported_reason(moe, {}), "MoE layers (qwen3_moe) run on the CPU only");
  ModelConfig small = qwen3_0_6b();
  small.head_dim = 16;
  EXPECT_EQ(cuda_unsupported_reason(small, {}),
            "head_dim 16 (the CUDA attention kernel takes 64, 128 or 256)");
  ModelConfig partial = qwen3_0_6b();
  partial.partial_rotary_factor = 0.5f;
  EXPECT_NE(cuda_unsupported_reason(partial, {}).find("partial rotary"), std::string::npos);
  EXPECT_NE(cuda_unsupported_reason(qwen3_0_6b(), {true, 0}).find("int8"), std::string::npos);
  EXPECT_NE(cuda_unsupported_reason(qwen3_0_6b(), {false, 2}).find("LoRA"), std::string::npos);
  // Qwen3.5's Gated DeltaNet layers (issue #35): refused by name, and --device cuda says so.
  ModelConfig hybrid = qwen3_0_6b();
  hybrid.model_type = "qwen3_5_text";
  hybrid.layer_types = {LayerType::linear_attention, LayerType::full_attention};
  hybrid.num_hidden_layers = 2;
  const std::string why = cuda_unsupported_reason(hybrid, {});
  EXPECT_EQ(why,
            "linear-attention (Gated DeltaNet) layers and their recurrent states (qwen3_5_text) "
            "run on the CPU only");
  try {
    resolve_device(Device::cuda, CudaAvailability{true, 1, "H200"}, why);
    ADD_FAILURE() << "--device cuda accepted a hybrid model";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("linear-attention (Gated DeltaNet)"), std::string::npos)
        << e.what();
  }
}

}  // namespace
}  // namespace ps
