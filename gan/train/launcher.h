// `hamgan train --nproc N` on one machine, as torchrun would: the same command started N times
// as ranks 0..N-1 (RANK, WORLD_SIZE, MASTER_ADDR, MASTER_PORT), each with --threads or its share of the
// cores. The launcher relays SIGINT/SIGTERM/SIGHUP to the ranks once, so every rank stops at
// one iteration with a checkpoint; a rank whose launcher dies stops as if signalled.
#pragma once

namespace hamgan {

// Starts the ranks (argv: the `train` command's own arguments, argv[0] its name) and waits for
// all of them: 0 when every rank exits 0.
int launch_local_ranks(int nproc, int argc, char** argv);
// In a rank that launch_local_ranks started (HAMGAN_LAUNCHER_PID set): a launcher killed outright
// (SIGKILL) still stops this rank with a checkpoint; hamgan::Error naming HAMGAN_LAUNCHER_PID when
// the launcher is already gone. Elsewhere: nothing done.
void attach_to_launcher();

}  // namespace hamgan
