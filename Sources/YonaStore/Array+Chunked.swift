extension Array {
    /// Consecutive slices of at most `size` elements (bulk statements stay under the drivers' bind limits).
    package func chunked(_ size: Int) -> [ArraySlice<Element>] {
        stride(from: 0, to: count, by: size).map { self[$0..<Swift.min($0 + size, count)] }
    }
}
