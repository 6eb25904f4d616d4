import Fluent
import Foundation

/// Time a device spent on a goal's category. No URL and nothing personal: the visited URL exists only
/// inside the sealed goal-conflict message.
final class Activity: Model, @unchecked Sendable {
    static let schema = "activities"

    // managed
    @ID(key: .id) var id: UUID?

    // data
    @Field(key: "start_time") var startTime: Date
    @Field(key: "end_time") var endTime: Date

    // relationships
    @Parent(key: "user_anonymized_id") var userAnonymized: UserAnonymized
    /// Nil once the device was removed (its activities stay).
    @OptionalParent(key: "device_anonymized_id") var device: DeviceAnonymized?
    @Parent(key: "goal_id") var goal: Goal

    init() {}

    init(id: UUID, userAnonymizedID: UUID, deviceID: UUID, goalID: UUID, startTime: Date, endTime: Date) {
        self.id = id
        self.$userAnonymized.id = userAnonymizedID
        self.$device.id = deviceID
        self.$goal.id = goalID
        self.startTime = startTime
        self.endTime = endTime
    }
}
