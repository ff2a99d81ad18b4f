//! INIT / INIT ACK parameters: advertised addresses and supported extensions.

use super::{Ctx, Tracker};
use crate::events::{AddressSource, EventKind, EventSink};
use crate::wire::sctp_chunk::{chunk_type, InitChunk};
use crate::wire::sctp_param::param_type;

impl Tracker {
    pub(super) fn init(
        &mut self,
        ctx: &Ctx,
        init: &InitChunk<'_>,
        sink: &mut dyn EventSink,
    ) -> Result<(), &'static str> {
        // The handshake's own addresses are confirmed implicitly (RFC 9260
        // §5.4): Linux makes the INIT's and the INIT ACK's source ACTIVE
        // (sctp_process_init) and the address the user connected to is
        // confirmed too. No notification: no `path_confirmed`.
        let a = &mut self.associations[ctx.assoc];
        let dst = a.paths[usize::from(ctx.path)].dst;
        for (endpoint, address) in [(ctx.sender, ctx.src), (ctx.receiver(), dst)] {
            if let Some(info) = a.endpoints[endpoint].address_mut(address) {
                info.confirm_by_handshake();
            }
            a.sync_confirmation(endpoint, address);
        }
        for param in init.params() {
            let Ok(param) = param else {
                return Err("INIT parameter length runs past the chunk");
            };
            match param.param_type() {
                param_type::IPV4_ADDRESS | param_type::IPV6_ADDRESS => {
                    let Ok(address) = param.address() else {
                        return Err("INIT address parameter of the wrong length");
                    };
                    let learned = self.learn(
                        ctx.assoc,
                        ctx.sender,
                        address,
                        AddressSource::Init,
                        ctx.frame,
                    );
                    // Listed, not used: unconfirmed until a HEARTBEAT ACK.
                    self.associations[ctx.assoc].sync_confirmation(ctx.sender, address);
                    if learned {
                        sink.emit(ctx.event(EventKind::AddressLearned {
                            endpoint: ctx.sender,
                            address,
                            how: AddressSource::Init,
                        }));
                    }
                }
                param_type::SUPPORTED_EXTENSIONS => {
                    self.associations[ctx.assoc].endpoints[ctx.sender].supported_extensions =
                        param.value().iter().map(|&t| chunk_type::name(t)).collect();
                }
                _ => {}
            }
        }
        // RFC 9260 §5.1.2: without address parameters the source address is
        // the endpoint's only address (learned as observed already).
        Ok(())
    }
}
