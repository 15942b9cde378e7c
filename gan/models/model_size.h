// How large a config's models are, on paper, before they are built: the 3x3 and 1x1 convolution
// weights of every residual block of G and D (gan/config/arch.h), a floor of their parameter
// count (the rest, embeddings, BN and context blocks, is smaller). `hamgan info` and `train`
// check it against the machine's memory before building anything.
#pragma once
#include <cstdint>
#include <string>

#include "gan/config/config.h"

namespace hamgan {

// At least this many parameters in G and in D.
int64_t generator_parameter_floor(const Config& cfg);
int64_t discriminator_parameter_floor(const Config& cfg);
// Error naming generator.ch / discriminator.ch (and ch_mult) unless `copies` fp32 copies of G
// and D (1: the models; 5: training's weights, gradients, Adam's two moments and EMA G) fit in
// this machine's memory; `what` says what would hold them ("hamgan info builds G and D").
void check_models_fit_memory(const Config& cfg, double copies, const std::string& what);

}  // namespace hamgan
