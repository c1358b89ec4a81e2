//! Hardware counters over replayed passes: the tool's counter path, the same code on every
//! runtime. aqlprofile is loaded at run time (`library`); counter groups are turned into packet
//! sets per (agent, group) and attached for one pass each (group `p mod G` on pass `p`); their
//! results are read at PASS EXIT.

pub mod library;
