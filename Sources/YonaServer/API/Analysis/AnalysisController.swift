import Foundation
import Vapor

/// The analyzer API (internal token): what the network classifier reports.
enum AnalysisController {
    static func register(_ routes: any RoutesBuilder) {
        routes.post("userAnonymized", ":userAnonymizedID", "networkActivity", use: networkActivity)
    }

    /// The app's own report (with the Yona password, not the internal token): app usage on the phone,
    /// with the phone's clock corrected by the offset between `deviceDateTime` and the server's time.
    @Sendable static func appActivity(req: Request) async throws -> HTTPStatus {
        let user = try await req.unlockPathUser()
        let device = try await req.devices.device(try req.uuidParameter("deviceID"), of: user)
        let body = try req.decodeStrict(AppActivityRequest.self)
        guard let deviceTime = YonaDateFormat.parseTimestamp(try requireText(body.deviceDateTime)) else { throw YonaError(.invalidJSON) }
        guard let items = body.activities else { throw YonaError(.missingProperty) }
        try await req.devices.markAndroidIfUnknown(device)
        let now = Date()
        let skew = now.timeIntervalSince(deviceTime)
        for item in items {
            guard let start = YonaDateFormat.parseTimestamp(try requireText(item.startTime)),
                let end = YonaDateFormat.parseTimestamp(try requireText(item.endTime))
            else {
                throw YonaError(.invalidJSON)
            }
            // Yona's checks and codes, on the phone's times corrected to the server's clock.
            guard end >= start else { throw YonaError(.appActivityEndBeforeStart) }
            guard start.addingTimeInterval(skew) <= now else { throw YonaError(.appActivityStartsInFuture) }
            guard end.addingTimeInterval(skew) <= now else { throw YonaError(.appActivityEndsInFuture) }
            try await req.analysis.record(
                ActivityEvent(
                    userAnonymizedID: user.privateData.userAnonymizedID, deviceIndex: device.deviceIndex,
                    categoryNames: [try requireText(item.application)], matchApplications: true, url: nil,
                    startTime: start.addingTimeInterval(skew), endTime: end.addingTimeInterval(skew), idempotencyKey: nil))
        }
        return .noContent
    }

    @Sendable static func networkActivity(req: Request) async throws -> HTTPStatus {
        let userAnonymizedID = try req.uuidParameter("userAnonymizedID")
        let body = try req.decodeStrict(NetworkActivityRequest.self)
        guard let deviceIndex = body.deviceIndex, let categories = body.categories, !categories.isEmpty else {
            throw YonaError(.missingProperty)
        }
        var eventTime = Date()
        if let raw = body.eventTime {
            guard let parsed = YonaDateFormat.parseTimestamp(raw) else { throw YonaError(.invalidJSON) }
            eventTime = parsed
        }
        let key = req.headers.first(name: "Idempotency-Key") ?? body.eventId
        if let key, key.isEmpty || key.count > 200 { throw YonaError(.invalidJSON) }
        try await req.analysis.record(
            ActivityEvent(
                userAnonymizedID: userAnonymizedID, deviceIndex: deviceIndex, categoryNames: categories,
                matchApplications: false, url: body.url, startTime: eventTime, endTime: nil, idempotencyKey: key))
        return .noContent
    }
}
