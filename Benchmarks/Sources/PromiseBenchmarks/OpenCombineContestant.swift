import Dispatch
import Foundation
import OpenCombine

/// `Future`, subscribed with `sink`; a sequence of futures flattened then `collect`ed for all, or `first` for a
/// race (OpenCombine 0.14 has no `MergeMany`).
/// Everything runs inline on the calling thread.
struct OpenCombineContestant: Contestant {
    let name = "OpenCombine"
    let mode = "inline (sink)"

    func createFulfilHandler(_ count: Int) -> Double? {
        var sum = 0
        return measure(units: count) {
            for index in 0..<count {
                var fulfill: ((Swift.Result<Int, Never>) -> Void)?
                let future = Future<Int, Never> { fulfill = $0 }
                let subscription = future.sink { sum &+= $0 }
                fulfill?(.success(index))
                blackHole(subscription)
            }
            blackHole(sum)
        }
    }

    func when(_ count: Int) -> Double? {
        var fulfills: [(Swift.Result<Int, Never>) -> Void] = []
        let futures = (0..<count).map { _ in Future<Int, Never> { fulfills.append($0) } }
        return measure(units: count) {
            var values = 0
            let subscription = Publishers.Sequence<[Future<Int, Never>], Never>(sequence: futures).flatMap { $0 }
                .collect().sink { values = $0.count }
            for (index, fulfill) in fulfills.enumerated() { fulfill(.success(index)) }
            precondition(values == count)
            blackHole(subscription)
        }
    }

    func race(_ count: Int) -> Double? {
        var fulfills: [(Swift.Result<Int, Never>) -> Void] = []
        let futures = (0..<count).map { _ in Future<Int, Never> { fulfills.append($0) } }
        return measure(units: count) {
            var value = 0
            let subscription = Publishers.Sequence<[Future<Int, Never>], Never>(sequence: futures).flatMap { $0 }
                .first().sink { value = $0 }
            fulfills[count / 2](.success(1))
            precondition(value == 1)
            blackHole(subscription)
        }
    }
}
