import Vapor

/// The analyzer API (internal token): what the network classifier reports.
enum AnalysisController {
    static func register(_ routes: any RoutesBuilder) {
        routes.post("userAnonymized", ":userAnonymizedID", "networkActivity", use: networkActivity)
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
        try await req.analysis.record(ActivityEvent(
            userAnonymizedID: userAnonymizedID, deviceIndex: deviceIndex, categoryNames: categories,
            matchApplications: false, url: body.url, startTime: eventTime, endTime: nil, idempotencyKey: key))
        return .noContent
    }
}
