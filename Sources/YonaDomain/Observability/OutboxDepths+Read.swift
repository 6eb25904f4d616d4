import FluentKit
import Foundation
import YonaDelivery
import YonaObservability

extension OutboxDepths {
    /// Reads every outbox's depth through its owner: pushes, texts and mails, VPN directory changes, and the
    /// announcement fan-out.
    package static func read(on db: any Database) async throws -> OutboxDepths {
        OutboxDepths(
            pushesByProvider: try await PushOutbox.depthByProvider(on: db), textsByChannel: try await TextQueue.depthByChannel(on: db),
            vpnChanges: try await VPNChangeQueue.depth(on: db),
            announcementRecipients: try await AnnouncementFanOut(db: db, skipLocked: false).pending())
    }
}
