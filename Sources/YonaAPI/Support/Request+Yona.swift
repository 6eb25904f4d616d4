import Fluent
import Foundation
import Vapor
import YonaDomain
import YonaStore

extension Request {
    /// The database as a request uses it: a read that does not answer within `YONA_DATABASE_READ_DEADLINE_SECONDS`
    /// fails with 503 and `Retry-After` instead of holding the request (`DeadlineReads`, issue 36). Handlers use this,
    /// never Fluent's `db` (`ModuleLayeringTests`).
    package var store: any Database {
        DeadlineReads(base: db, deadline: .milliseconds(Int64(application.yona.config.databaseReadDeadline * 1000)))
    }

    /// A UUID path parameter; a malformed one is `error.invalid.uuid`.
    package func uuidParameter(_ name: String) throws -> UUID {
        guard let raw = parameters.get(name), let id = UUID(text: raw) else { throw YonaError(.invalidUUID) }
        return id
    }

    /// A UUID query parameter that must be present.
    package func requiredUUIDQuery(_ name: String) throws -> UUID {
        guard let id = try optionalUUIDQuery(name) else { throw YonaError(.missingRequestParameter, quoting: name) }
        return id
    }

    package func optionalUUIDQuery(_ name: String) throws -> UUID? {
        guard let raw = queryValue(name) else { return nil }
        guard let id = UUID(text: raw) else { throw YonaError(.invalidUUID) }
        return id
    }

    /// One query parameter's text, as `query[String.self, at: name]` reads it. A plain query (`name=value` pairs with
    /// no `+`, `%` or brackets, each name once: what the apps send) is read directly; any other goes through Vapor's
    /// form decoder, which parsed the whole query again for each parameter asked for (3% of a profile read).
    package func queryValue(_ name: String) -> String? {
        guard let raw = url.query else { return nil }
        guard let pairs = PlainQuery.pairs(raw) else { return query[String.self, at: name] }
        return pairs.first { $0.name == name }.map { String($0.value) }
    }

    /// A paging query parameter (`page`, `size`): absent is the default, anything but a number in `range` is refused.
    package func pagingParameter(_ name: String, default value: Int, range: ClosedRange<Int>) throws -> Int {
        guard let raw = queryValue(name) else { return value }
        guard let number = Int(raw), range.contains(number) else { throw YonaError(.invalidParameter) }
        return number
    }

    /// The configured oldest app versions (`AppVersionPolicy`), for an app that reports its version.
    package func checkAppVersion(_ operatingSystem: OperatingSystem, version: String?, code: Int?) throws {
        try application.yona.config.minimumAppVersions.check(operatingSystem, version: version, code: code)
    }

    package func checkAppVersion(_ device: NewDevice) throws {
        try checkAppVersion(device.operatingSystem, version: device.appVersion, code: device.appVersionCode)
    }

    package var yonaPasswordHeader: String? { headers.first(name: "Yona-Password") }

    /// The user named by the `userID` path parameter, unlocked with this request's `Yona-Password`.
    package func unlockPathUser() async throws -> UnlockedUser {
        try await users.unlock(userID: try uuidParameter("userID"), passwordHeader: yonaPasswordHeader)
    }
}

/// A query of plain `name=value` pairs, each name once; `nil` for anything Vapor's form decoder reads its own way
/// (percent-encoding, `+` for a space, `name[key]` paths, a name without `=`, a name given twice).
package enum PlainQuery {
    package static func pairs(_ query: String) -> [(name: Substring, value: Substring)]? {
        var pairs: [(name: Substring, value: Substring)] = []
        for pair in query.split(separator: "&") {
            guard
                !pair.utf8.contains(where: {
                    $0 == UInt8(ascii: "+") || $0 == UInt8(ascii: "%") || $0 == UInt8(ascii: "[") || $0 == UInt8(ascii: "]")
                }),
                let equals = pair.firstIndex(of: "=")
            else { return nil }
            let name = pair[..<equals]
            guard !name.isEmpty, !pairs.contains(where: { $0.name == name }) else { return nil }
            pairs.append((name, pair[pair.index(after: equals)...]))
        }
        return pairs
    }
}
