# lib/src/stream: RCU for the module chain and the RCU map strategy
# (urcu-memb: membarrier-based, no signals; lfht lives in urcu-cds).
LIB_LIBS += -lurcu-memb -lurcu-cds
