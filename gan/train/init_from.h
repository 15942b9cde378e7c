// Fine-tuning (train.init_from): a new run starts from the weights of another run's checkpoint,
// on its own data and, where model.n_classes differs, its own classes. As in FreezeD's
// fine-tuning baselines (Mo et al. 2020), G, D and EMA G are copied and the class-conditional
// tensors (G's class embeddings, D's projection embedding) are learnt afresh; the run's own
// iteration, RNG streams and loss state start new.
#pragma once
#include <ostream>
#include <string>
#include <vector>

#include "gan/checkpoint/checkpoint.h"

namespace hamgan {

class Trainer;

// Copies G, D and EMA G of `c` into the fresh trainer `t` (an EMA G from a checkpoint without
// one: its G), and Adam's moments too when `optimizer`. A tensor whose shape differs from the
// checkpoint's in its class count only (c's model.n_classes against t's) keeps t's
// initialisation; the names of those ("d.embed.weight_orig") are returned. Any other difference (a
// key of model, generator or discriminator but model.n_classes, a tensor missing, extra or of
// another shape): hamgan::Error naming the checkpoint, the keys with both values and the tensors.
std::vector<std::string> init_from_checkpoint(Trainer& t, const CheckpointData& c, bool optimizer);

// The line the lead rank logs for it.
void log_init_from(std::ostream& out, const CheckpointData& c, int64_t n_classes,
                   const std::vector<std::string>& reinitialised, bool optimizer);

}  // namespace hamgan
