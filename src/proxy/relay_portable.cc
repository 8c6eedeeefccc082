// The tunnel relay where there is no splice(2) (macOS, Windows): the copy relay, under relay.h's names.
#include "proxy/relay_copy.h"

namespace cage::proxy {

int open_leg(Leg& leg, int src, int dst, int) { return open_copy_leg(leg, src, dst, 0); }

void pump(Leg& leg) { pump_copy(leg); }

}  // namespace cage::proxy
