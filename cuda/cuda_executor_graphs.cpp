// CudaExecutor's CUDA graphs (cuda_executor_impl.h): one per decode batch-size bucket
// (cuda/graph_buckets.h), captured at start after an eager warm-up step, replayed by every
// decode-only step that fits a bucket.
#include <cstdio>
#include <string>

#include "cuda/cuda_executor_impl.h"
#include "cuda/graph_buckets.h"

namespace ps::cuda {

void CudaExecutor::drop_graphs() {
  for (auto& [bucket, g] : graphs_) {
    if (g.exec != nullptr) cudaGraphExecDestroy(g.exec);
  }
  graphs_.clear();
}

void CudaExecutor::upload_graph_plan(const StepPlan& padded, PlanUploadLayout* lay) {
  *lay = plan_upload_layout(padded);
  if (lay->total * 4 > graph_plan_dev_.bytes()) {
    throw std::logic_error("CudaExecutor: a padded plan outgrew the graph plan buffer");
  }
  plan_host_.reserve(lay->total * 4, "pinned plan");
  pack_plan(padded, *lay, static_cast<int32_t*>(plan_host_.get()));
  check_cuda(cudaMemcpyAsync(graph_plan_dev_.get(), plan_host_.get(), size_t(lay->total) * 4,
                             cudaMemcpyHostToDevice, stream_),
             "cudaMemcpyAsync (graph plan)");
}

void CudaExecutor::capture_all_graphs() {
  if (buckets_.empty() || graph_width_ < 1) {
    graphs_enabled_ = false;
    return;
  }
  const PlanUploadLayout largest =
      plan_upload_layout(graph_warmup_plan(buckets_.back(), graph_width_));
  graph_plan_dev_.reserve(largest.total * 4, "graph plan");
  for (int32_t bucket : buckets_) {
    PlanUploadLayout lay;
    upload_graph_plan(graph_warmup_plan(bucket, graph_width_), &lay);
    enqueue_step(lay, static_cast<const int32_t*>(graph_plan_dev_.get()));
    check_cuda(cudaStreamSynchronize(stream_), "graph warm-up step");
    if (!capture(bucket, lay)) return;
  }
}

bool CudaExecutor::capture(int32_t bucket, const PlanUploadLayout& lay) {
  cudaGraph_t graph = nullptr;
  check_cuda(cudaStreamBeginCapture(stream_, cudaStreamCaptureModeThreadLocal),
             "cudaStreamBeginCapture");
  std::string failure;
  try {
    enqueue_step(lay, static_cast<const int32_t*>(graph_plan_dev_.get()));
  } catch (const std::exception& e) {
    failure = e.what();
  }
  // Ended in every case, so the stream is usable again whatever happened inside.
  const cudaError_t end = cudaStreamEndCapture(stream_, &graph);
  cudaGraphExec_t exec = nullptr;
  if (failure.empty() && end == cudaSuccess) {
    const cudaError_t made = cudaGraphInstantiate(&exec, graph, 0);
    if (made != cudaSuccess)
      failure = std::string("cudaGraphInstantiate: ") + cudaGetErrorString(made);
  } else if (failure.empty()) {
    failure = std::string("cudaStreamEndCapture: ") + cudaGetErrorString(end);
  }
  if (graph != nullptr) cudaGraphDestroy(graph);
  if (!failure.empty()) {
    (void)cudaGetLastError();
    drop_graphs();
    graphs_enabled_ = false;
    std::fprintf(stderr,
                 "pagedserve: CUDA graph capture for %d sequences failed (%s); every step "
                 "runs eagerly\n",
                 bucket, failure.c_str());
    return false;
  }
  graphs_[bucket] = Graph{exec};
  return true;
}

bool CudaExecutor::try_graph_step(const StepPlan& plan) {
  if (!graphs_enabled_ || !is_graph_eligible(plan) || plan.max_blocks_per_seq > graph_width_) {
    return false;
  }
  const int32_t bucket = graph_bucket_for(plan.num_seqs(), buckets_);
  if (bucket == 0 || bucket > capacity_.rows || bucket > capacity_.tokens) return false;
  PlanUploadLayout lay;
  upload_graph_plan(pad_decode_plan(plan, bucket, graph_width_), &lay);
  auto found = graphs_.find(bucket);
  if (found == graphs_.end()) {
    // Dropped when the step buffers grew: captured again (capturing runs nothing).
    if (!capture(bucket, lay)) {
      enqueue_step(lay, static_cast<const int32_t*>(graph_plan_dev_.get()));
      return true;
    }
    found = graphs_.find(bucket);
  }
  check_cuda(cudaGraphLaunch(found->second.exec, stream_), "cudaGraphLaunch");
  return true;
}

}  // namespace ps::cuda
