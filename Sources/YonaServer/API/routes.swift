import Vapor

/// Every route of the server, grouped by area.
func routes(_ app: Application) {
    HealthController.register(app)
    UsersController.register(app)
    DevicesController.register(app)
    NewDeviceRequestsController.register(app)
}
