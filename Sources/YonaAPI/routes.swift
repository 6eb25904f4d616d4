import Foundation
import Vapor

/// Every route of the server, grouped by area. With an internal port (`YONA_INTERNAL_PORT`, or the default a
/// production server on a public address gets), the analyzer and admin APIs and `/metrics` answer only on the
/// internal listener and the app API only on the public one (`/health` and `/ready` on both); without one they
/// share the (loopback) public port.
package func routes(_ app: Application) {
    let separated = app.yona.config.internalPort != nil
    /// Marks the routes `register` adds as belonging to one listener (`ListenerGate` reads the mark).
    func on(_ listener: Listener, _ register: () -> Void) {
        let before = app.routes.all.count
        register()
        guard separated else { return }
        for route in app.routes.all[before...] { route.listener = listener }
    }
    HealthController.register(app)

    on(.public) {
        UsersController.register(app)
        PinResetController.register(app)
        DevicesController.register(app)
        WebPushController.register(app)
        NewDeviceRequestsController.register(app)
        ActivityCategoriesController.register(app)
        GoalsController.register(app)
        MessagesController.register(app)
        ActivityReportsController.register(app)
        BuddiesController.register(app)
        VPNResourcesController.register(app)
        UserPhotoController.register(app)
        // The app itself asks for a lost-phone overwrite (Yona's apps call it on the app API's address).
        UserOverwriteController.register(app)
        if app.yona.config.testServer {
            TestServerController.register(app)
        }
    }

    on(.internal) {
        MetricsController.register(app)
        ConsoleController.register(app)
        let internalAPI = app.grouped(InternalTokenMiddleware(token: app.yona.internalToken))
        AdminActivityCategoriesController.register(internalAPI.grouped("admin"))
        SystemMessagesController.register(internalAPI.grouped("admin"))
        WhiteListController.register(internalAPI.grouped("admin"))
        AnalysisController.register(internalAPI)
    }
    Route.cacheFacts(app.routes)
}
