import FluentKit
import Foundation

/// How many deliveries of one kind (pushes sent, texts failed by cause, analyzer events, …) every instance
/// counted in one minute: the console's charts of the last hour. Counts only; kept two days.
package final class DeliveryMinute: Model, @unchecked Sendable {
    package static let schema = "delivery_minutes"

    // managed
    @ID(key: .id) package var id: UUID?

    // data
    /// Minutes since 1970 (UTC).
    @Field(key: "minute") package var minute: Int64
    @Field(key: "series") package var series: String
    @Field(key: "count") package var count: Int

    package init() {}
}
