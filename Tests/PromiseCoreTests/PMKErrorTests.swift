import Foundation
import PromiseCore
import TestSupport
import Testing

@Suite struct PMKErrorTests {
    @Test func pmkErrorsAreEquatableByCase() {
        #expect(PMKError.badInput == .badInput)
        #expect(PMKError.badInput != .noWinner)
        #expect(PMKError.compactMap(1, Int.self) == .compactMap("other", Int.self))
        #expect(PMKError.compactMap(1, Int.self) != .compactMap(1, String.self))
    }

    @Test func pmkErrorsDescribeThemselves() {
        #expect(PMKError.returnedSelf.localizedDescription == "A promise handler returned itself")
        #expect(PMKError.compactMap("x", Int.self).debugDescription == "Could not `compactMap<Int>`: x")
    }
}
