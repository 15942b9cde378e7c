#include "gan/train/train_job.h"

#include <algorithm>
#include <memory>

#include "core/compat.h"
#include "core/error.h"
#include "gan/data/dataset.h"
#include "gan/data/synthetic.h"
#include "gan/train/trainer.h"
#include "gan/data/class_names.h"

namespace hamgan {

namespace {

// The training data, opened and checked against the model before the run directory is touched
// (a wrong model.n_classes leaves no config.yaml behind). Null: synthetic.
std::shared_ptr<Dataset> open_training_data(const TrainJob& job) {
  if (job.synthetic) return nullptr;
  const Config& cfg = job.cfg;
  std::shared_ptr<Dataset> data = open_dataset(cfg.data, cfg.model.resolution, cfg.model.image_channels);
  check_class_names(data->class_names(), cfg.data.path);  // written to classes.txt and exports
  if (data->num_classes() != cfg.model.n_classes)
    fail(cfg.source, ": model.n_classes is ", cfg.model.n_classes, " but ", cfg.data.path, " has ",
         data->num_classes(), " classes; set model.n_classes=", data->num_classes());
  return data;
}

// The real images of one rank, in micro-batches, positioned where a resumed run left off.
SourceFactory real_images(const TrainJob& job, const DistEnv& env, torch::Device device,
                          std::shared_ptr<Dataset> data) {
  return [&job, env, device, data](int64_t batch, LoaderState start) -> std::unique_ptr<BatchSource> {
    const Config& cfg = job.cfg;
    const int64_t res = cfg.model.resolution, ch = cfg.model.image_channels;
    if (job.synthetic) {
      auto synth = std::make_shared<SyntheticDataset>(std::max<int64_t>(4096, batch), res, ch,
                                                     cfg.model.n_classes, cfg.train.seed);
      // One stream per rank (the synthetic source has no shards).
      return std::make_unique<DatasetSource>(synth, batch, cfg.train.seed + 1000003 * env.rank, start);
    }
    LoaderOptions lo;
    lo.batch_size = batch;
    lo.seed = static_cast<uint64_t>(cfg.train.seed);
    lo.workers = job.workers;
    lo.rank = env.rank;  // each rank reads its own shard of every epoch
    lo.world_size = env.world_size;
    lo.class_group = cfg.train.class_group;
    lo.pin_memory = device.is_cuda();
    return std::make_unique<LoaderSource>(data, lo, start);
  };
}

}  // namespace

TrainResult run_train_job(const TrainJob& job, const DistEnv& env) {
  const std::shared_ptr<Dataset> data = open_training_data(job);
  TrainOptions to;
  to.out_dir = job.out_dir;
  if (data) to.class_names = data->class_names();
  const DistBackend backend = job.cfg.train.dist_backend;
  to.device = train_device(word_of(job.cfg.train.device, kDeviceWords), env.enabled() ? env.local_rank : -1, -1,
                           backend);
  if (to.device->is_cuda()) compat::cuda_set_device(to.device->index());  // before NCCL and any allocation
  std::unique_ptr<DataParallel> dp;
  if (env.enabled()) {
    dp = std::make_unique<DataParallel>(env, *to.device, backend);
    to.dp = dp.get();
  }
  if (job.make_eval) to.eval = job.make_eval(*to.device);
  if (dp) dp->meet();  // the first collective is timed: nobody goes on while rank 0 reads its reference
  const TrainResult r = train(job.cfg, to, real_images(job, env, *to.device, data));  // a signal or the time limit too
  if (dp) dp->barrier();  // rank 0 may host the store: nobody leaves before the checkpoint
  return r;
}

}  // namespace hamgan
