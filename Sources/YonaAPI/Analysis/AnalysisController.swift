import Foundation
import Vapor
import YonaDomain
import YonaStore

/// The analyzer API (internal token): what the network classifier reports.
package enum AnalysisController {
    package static func register(_ routes: any RoutesBuilder) {
        routes.post("userAnonymized", ":userAnonymizedID", "networkActivity", use: networkActivity)
        routes.get("relevantSmoothwallCategories", use: relevantCategories)
    }

    /// Yona's `GET /relevantSmoothwallCategories/`: every classifier category some activity category names, so the
    /// classifier reports only what can matter.
    @Sendable package static func relevantCategories(req: Request) async throws -> RelevantCategoriesDTO {
        let names = try await ActivityCategory.query(on: req.store).all().flatMap(\.classifierCategories)
        return RelevantCategoriesDTO(categories: Set(names).sorted())
    }

    package struct RelevantCategoriesDTO: Content {
        package let categories: [String]
    }

    /// Yona's apps send at most this many app activities at once; a larger batch (a phone that was offline for
    /// long) is answered 200 and dropped, as Yona's server did, rather than refused (the app would send it again).
    package static let appActivityBatchLimit = 200

    /// The app's own report (with the Yona password, not the internal token): app usage on the phone,
    /// with the phone's clock corrected by the offset between `deviceDateTime` and the server's time.
    @Sendable package static func appActivity(req: Request) async throws -> HTTPStatus {
        let body = try req.decodeStrict(AppActivityRequest.self)
        if let items = body.activities, items.count > appActivityBatchLimit { return .ok }
        let user = try await req.unlockPathUser()
        let device = try await req.devices.device(try req.uuidParameter("deviceID"), of: user)
        guard let items = body.activities else { throw YonaError(.missingProperty, quoting: "activities") }
        guard let deviceTime = YonaDateFormat.parseTimestamp(try requireText(body.deviceDateTime, property: "deviceDateTime")) else {
            throw YonaError(.invalidJSON)
        }
        try await req.devices.markAndroidIfUnknown(device)
        let now = Date()
        // Yona's rule: a phone clock within 10 s of the server's is believed, a worse one corrected.
        let offset = now.timeIntervalSince(deviceTime)
        let skew = abs(offset) > deviceTimeMargin ? offset : 0
        guard let inboxSecret = user.privateData.anonymousInboxSecretKey else { throw YonaError(.unexpected) }
        // Every item is checked before any is recorded: a refused batch leaves nothing behind.
        var apps: [String: ActivityApp] = [:]
        var events: [ActivityEvent] = []
        for item in items {
            guard let start = YonaDateFormat.parseTimestamp(try requireText(item.startTime)),
                let end = YonaDateFormat.parseTimestamp(try requireText(item.endTime))
            else {
                throw YonaError(.invalidJSON)
            }
            // Yona's checks and codes, on the phone's times corrected to the server's clock.
            guard end >= start else { throw YonaError(.appActivityEndBeforeStart) }
            guard start.addingTimeInterval(skew) <= now.addingTimeInterval(deviceTimeMargin) else { throw YonaError(.appActivityStartsInFuture) }
            guard end.addingTimeInterval(skew) <= now.addingTimeInterval(deviceTimeMargin) else { throw YonaError(.appActivityEndsInFuture) }
            let name = try requireText(item.application)
            if apps[name] == nil { apps[name] = try ActivityApp(name: name, inboxSecretKey: inboxSecret) }
            events.append(
                ActivityEvent(
                    userAnonymizedID: user.privateData.userAnonymizedID, deviceIndex: device.deviceIndex,
                    categoryNames: [name], matchApplications: true, url: nil,
                    startTime: min(start.addingTimeInterval(skew), now), endTime: min(end.addingTimeInterval(skew), now), app: apps[name],
                    idempotencyKey: nil))
        }
        // One report: the whole batch is recorded in one transaction, in the order the activities happened.
        try await req.analysis.record(
            ActivityReport(
                userAnonymizedID: user.privateData.userAnonymizedID, deviceIndex: device.deviceIndex,
                events: events.sorted(by: { $0.startTime < $1.startTime })))
        return .noContent
    }

    /// How far a phone's clock may be off before its times are corrected, and how far in the future a time may lie.
    package static let deviceTimeMargin: TimeInterval = 10

    @Sendable package static func networkActivity(req: Request) async throws -> HTTPStatus {
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
