import Foundation
import Vapor

/// `GET /webPush/vapidPublicKey`: the key a browser or UnifiedPush distributor binds a subscription to
/// (`applicationServerKey`), so only this server can push to it. Public: it is the public half of a key pair.
package enum WebPushController {
    package static func register(_ routes: any RoutesBuilder) {
        routes.get("webPush", "vapidPublicKey", use: vapidPublicKey)
    }

    package struct PublicKey: Content {
        package let publicKey: String
    }

    @Sendable package static func vapidPublicKey(req: Request) async throws -> PublicKey {
        PublicKey(publicKey: req.application.yona.pushProvider.webPush.vapid.publicKey)
    }
}
