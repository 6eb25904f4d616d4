import Foundation
import Vapor

/// Every route of the server, grouped by area.
func routes(_ app: Application) {
    HealthController.register(app)
    MetricsController.register(app)
    UsersController.register(app)
    DevicesController.register(app)
    NewDeviceRequestsController.register(app)
    ActivityCategoriesController.register(app)
    GoalsController.register(app)
    MessagesController.register(app)
    BuddiesController.register(app)
    UserOverwriteController.register(app)

    let internalAPI = app.grouped(InternalTokenMiddleware(token: app.yona.internalToken))
    AdminActivityCategoriesController.register(internalAPI.grouped("admin"))
    SystemMessagesController.register(internalAPI.grouped("admin"))
    AnalysisController.register(internalAPI)

    if app.yona.config.testServer {
        TestServerController.register(app)
    }
}
