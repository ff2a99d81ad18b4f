//! The tracker's lookup indexes: the tag, INIT and address tables that map
//! what a packet carries to the association it belongs to.
//!
//! Their keys and upkeep live here, below both the code that fills them
//! (`demux`) and the code that empties them (`retire`), so that neither
//! reaches into the other and [`super::assoc`] can name its keys without
//! depending on either.

use crate::events::{AssocId, EndpointId};
use rustc_hash::FxHashMap;
use std::net::IpAddr;

/// Key of the verification-tag table: a packet from `src_port` to
/// `dst_port` carrying `tag` belongs to (association, sending endpoint).
pub(crate) type TagKey = (u16, u16, u32);

/// Two ports, smaller first: the key of tables that do not care which
/// endpoint has which port.
pub(super) type PortPair = (u16, u16);

/// By the key a packet carries: its association, the endpoint that sent
/// it, and whether the key alone says so (ports differ, or the two
/// endpoints' tags are known and differ).
pub(super) type TagIndex = FxHashMap<TagKey, (AssocId, EndpointId, bool)>;

/// INITs seen, by (src port, dst port, initiate tag), to fold INIT
/// retransmissions into one association.
pub(super) type InitIndex = FxHashMap<TagKey, AssocId>;

/// Open (not ended) associations by unordered port pair and an address of
/// either endpoint: what a new INIT may supersede.
pub(super) type OpenByAddress = FxHashMap<(PortPair, IpAddr), Vec<AssocId>>;

/// Open associations with a verification tag still unknown, by unordered
/// port pair, oldest first.
pub(super) type HalfKnown = FxHashMap<PortPair, Vec<AssocId>>;

pub(super) fn port_pair(a: u16, b: u16) -> PortPair {
    (a.min(b), a.max(b))
}

/// Removes `id` from the list under `key`, dropping the key when empty.
/// Keeps the list's order (lists are short: associations sharing ports).
pub(super) fn remove_from<K: std::hash::Hash + Eq>(
    map: &mut FxHashMap<K, Vec<AssocId>>,
    key: K,
    id: AssocId,
) {
    if let Some(list) = map.get_mut(&key) {
        if let Some(i) = list.iter().position(|&x| x == id) {
            list.remove(i);
        }
        if list.is_empty() {
            map.remove(&key);
        }
    }
}
