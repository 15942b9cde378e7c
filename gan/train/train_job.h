// One rank of `hamgan train`: its device resolved once (for the model, the loader's pinned
// memory and the process group), the real-image source (or the synthetic set), data parallel
// when WORLD_SIZE > 1, then train(). Every rank waits for the others before it returns.
#pragma once
#include <cstdint>
#include <functional>
#include <string>

#include "gan/config/config.h"
#include "gan/train/distributed.h"
#include "gan/train/trainer.h"

namespace hamgan {

struct TrainJob {
  Config cfg;
  std::string out_dir;
  bool synthetic = false;  // gan/data/synthetic.h instead of data.* (smoke runs)
  int64_t workers = 2;     // image-decoding threads of the loader
  // Makes this rank's part in scoring eval.every (gan/eval/train_scorer.h) on its device, once
  // the ranks have met: rank 0's loads the reference, which can take minutes (the others wait
  // for it untimed, not under HAMGAN_RENDEZVOUS_TIMEOUT). Null: no scoring.
  std::function<EvalHook(torch::Device)> make_eval;
};

TrainResult run_train_job(const TrainJob& job, const DistEnv& env);

}  // namespace hamgan
