import Dispatch
import Testing

@testable import Metrics

/// The text format 0.0.4 exactly as rendered (https://prometheus.io/docs/instrumenting/exposition_formats/):
/// HELP and TYPE lines, label values escaped, histograms' cumulative buckets with `+Inf`, `_sum`, `_count`.
@Suite struct PrometheusRenderTests {
    @Test func aRegistryRendersEveryKindInRegistrationOrderWithExactText() {
        let registry = MetricsRegistry()
        let requests = registry.counter("app_requests_total", help: "Requests served.")
        let logins = registry.counter("app_logins_total", help: "Logins, by result.", labelNames: ["result"])
        let open = registry.gauge("app_open", help: "Open now.", labelNames: ["transport"])
        registry.gauge("app_queue_depth", help: "Sampled.") { 7 }
        let latency = registry.histogram("app_latency_seconds", help: "Latency.", buckets: [0.005, 0.1, 1])
        requests.increment()
        requests.increment(by: 41)
        logins.labels("refused").increment()
        logins.labels("accepted").increment(by: 2)
        open.labels("tcp").increment(by: 3)
        open.labels("tcp").decrement()
        open.labels("websocket").set(-1)
        latency.observe(0.005)  // on the bound: in that bucket
        latency.observe(0.05)
        latency.observe(2.5)  // beyond every bound: +Inf only
        #expect(
            registry.render() == """
                # HELP app_requests_total Requests served.
                # TYPE app_requests_total counter
                app_requests_total 42
                # HELP app_logins_total Logins, by result.
                # TYPE app_logins_total counter
                app_logins_total{result="accepted"} 2
                app_logins_total{result="refused"} 1
                # HELP app_open Open now.
                # TYPE app_open gauge
                app_open{transport="tcp"} 2
                app_open{transport="websocket"} -1
                # HELP app_queue_depth Sampled.
                # TYPE app_queue_depth gauge
                app_queue_depth 7
                # HELP app_latency_seconds Latency.
                # TYPE app_latency_seconds histogram
                app_latency_seconds_bucket{le="0.005"} 1
                app_latency_seconds_bucket{le="0.1"} 2
                app_latency_seconds_bucket{le="1"} 2
                app_latency_seconds_bucket{le="+Inf"} 3
                app_latency_seconds_sum 2.555
                app_latency_seconds_count 3

                """)
    }

    @Test func labelValuesEscapeBackslashQuoteAndNewlineAndHelpEscapesBackslashAndNewline() {
        let registry = MetricsRegistry()
        let family = registry.counter("x_total", help: "a \\ b\nc \"quoted\"", labelNames: ["path", "who"])
        family.labels("C:\\dir", "say \"hi\"\nbye").increment()
        #expect(
            registry.render() == """
                # HELP x_total a \\\\ b\\nc "quoted"
                # TYPE x_total counter
                x_total{path="C:\\\\dir",who="say \\"hi\\"\\nbye"} 1

                """)
    }

    @Test func aLabelledHistogramPutsLeLastAndSumAndCountCarryTheLabels() {
        let registry = MetricsRegistry()
        let family = registry.histogram("h_seconds", help: "H.", labelNames: ["op"], buckets: [1])
        family.labels("read").observe(.milliseconds(500))
        #expect(
            registry.render() == """
                # HELP h_seconds H.
                # TYPE h_seconds histogram
                h_seconds_bucket{op="read",le="1"} 1
                h_seconds_bucket{op="read",le="+Inf"} 1
                h_seconds_sum{op="read"} 0.5
                h_seconds_count{op="read"} 1

                """)
    }

    @Test func aFamilyWithoutChildrenShowsOnlyItsHelpAndType() {
        let registry = MetricsRegistry()
        _ = registry.counter("none_total", help: "Nothing yet.", labelNames: ["reason"])
        #expect(registry.render() == "# HELP none_total Nothing yet.\n# TYPE none_total counter\n")
    }

    @Test(arguments: [
        (0.0, "0"), (3.0, "3"), (-2.0, "-2"), (0.0025, "0.0025"), (0.00001, "1e-05"), (1.5, "1.5"),
        (Double.infinity, "+Inf"), (-Double.infinity, "-Inf"), (Double.nan, "NaN"), (1e300, "1e+300")
    ])
    func numbersAreWrittenAsGoParsesThem(value: Double, text: String) {
        #expect(PrometheusText.number(value) == text)
    }

    @Test func namesFollowTheFormatsRules() {
        #expect(PrometheusText.isValidMetricName("chat_logins_total"))
        #expect(PrometheusText.isValidMetricName("ns:sub_total"))
        #expect(!PrometheusText.isValidMetricName("9lives"))
        #expect(!PrometheusText.isValidMetricName("a-b"))
        #expect(!PrometheusText.isValidMetricName(""))
        #expect(PrometheusText.isValidLabelName("transport"))
        #expect(!PrometheusText.isValidLabelName("__name"))
        #expect(!PrometheusText.isValidLabelName("a:b"))
    }

    @Test func updatesFromManyThreadsAreNeverLost() {
        let registry = MetricsRegistry()
        let counter = registry.counter("c_total", help: "C.")
        let gauge = registry.gauge("g", help: "G.")
        let histogram = registry.histogram("h", help: "H.", buckets: [1])
        DispatchQueue.concurrentPerform(iterations: 4) { _ in
            for _ in 0..<10_000 {
                counter.increment()
                gauge.increment()
                histogram.observe(0.25)
            }
        }
        #expect(counter.value == 40_000)
        #expect(gauge.value == 40_000)
        #expect(histogram.snapshot == Histogram.Snapshot(cumulativeCounts: [40_000, 40_000], sum: 10_000, count: 40_000))
    }
}
