using Courier.Integration.Tests.Infrastructure;
using NATS.Client.JetStream;
using NATS.Client.JetStream.Models;

namespace Courier.Integration.Tests.Monitoring;

/// <summary>
/// /metrics (Courier only: nats-server has no such page, operators run prometheus-nats-exporter
/// beside it): after NATS.Net traffic, a strict parse of the exposition, the exporter's names, types
/// and labels, and values equal to the /varz and /jsz figures they are read from.
/// </summary>
[Trait("server", "courier")]
public sealed class MetricsTests(CourierFixture fixture) : IClassFixture<CourierFixture>
{
    // prometheus-nats-exporter's jsz labels (collector/jsz.go), in its order.
    private static readonly string[] StreamLabels =
        ["server_id", "server_name", "cluster", "domain", "meta_leader", "is_meta_leader", "account", "account_name", "account_id", "stream_name", "stream_leader", "is_stream_leader", "stream_raft_group"];

    private static readonly string[] ConsumerLabels = [.. StreamLabels, "consumer_name", "consumer_leader", "is_consumer_leader", "consumer_desc"];

    [Fact]
    public Task Metrics_give_the_varz_connz_and_jsz_figures_under_the_exporters_names_and_labels() =>
        fixture.WithJetStreamAsync(async server =>
        {
            using var cts = new CancellationTokenSource(NatsNetClient.TestTimeout);
            var ct = cts.Token;
            await using var nats = await NatsNetClient.ConnectAsync(server.Url);
            var js = new NatsJSContext(nats);
            var prefix = Subjects.NewPrefix();
            var streamName = NatsNetClient.NameFor(prefix);
            await using var sub = await nats.SubscribeCoreAsync<string>($"{prefix}.core", cancellationToken: ct);
            for (var i = 0; i < 10; i++)
            {
                await nats.PublishAsync($"{prefix}.core", $"message {i}", cancellationToken: ct);
            }

            for (var i = 0; i < 10; i++)
            {
                await sub.Msgs.ReadAsync(ct);
            }

            await js.CreateStreamAsync(new StreamConfig(streamName, [$"{prefix}.js.>"]) { MaxMsgs = 1000 }, ct);
            for (var i = 0; i < 5; i++)
            {
                (await js.PublishAsync($"{prefix}.js.{i % 2}", $"stored {i}", cancellationToken: ct)).EnsureSuccess();
            }

            var consumer = await js.CreateOrUpdateConsumerAsync(streamName, new ConsumerConfig("C1") { AckPolicy = ConsumerConfigAckPolicy.Explicit, Description = "dashboard \"probe\"" }, ct);
            var fetched = 0;
            await foreach (var _ in consumer.FetchAsync<string>(new NatsJSFetchOpts { MaxMsgs = 2, Expires = TimeSpan.FromSeconds(5) }, cancellationToken: ct))
            {
                fetched++; // not acked: both stay pending an ack
            }

            Assert.Equal(2, fetched);
            await nats.PingAsync(ct);

            using var monitor = new MonitorClient(server);
            var varzBefore = await monitor.GetJsonAsync("/varz");
            var metrics = await ScrapeAsync(server);
            var varzAfter = await monitor.GetJsonAsync("/varz");
            var jsz = await monitor.GetJsonAsync("/jsz?consumers=true&config=true");
            var serverId = varzAfter.GetProperty("server_id").GetString()!;

            // /varz: gauges with one label, server_id, between the two reads around the scrape.
            foreach (var field in new[] { "in_msgs", "out_msgs", "in_bytes", "out_bytes", "connections", "total_connections", "subscriptions", "slow_consumers" })
            {
                var sample = Single(metrics, $"gnatsd_varz_{field}", "gauge");
                Assert.Equal(["server_id"], sample.Labels.Keys.ToArray());
                Assert.Equal(serverId, sample.Labels["server_id"]);
                Assert.InRange(sample.Value, varzBefore.GetProperty(field).GetDouble(), varzAfter.GetProperty(field).GetDouble());
            }

            Assert.True(Single(metrics, "gnatsd_varz_in_msgs", "gauge").Value >= 15, "10 core and 5 stored messages published");
            Assert.Equal(varzAfter.GetProperty("max_payload").GetDouble(), Single(metrics, "gnatsd_varz_max_payload", "gauge").Value);
            Assert.Equal(varzAfter.GetProperty("routes").GetDouble(), Single(metrics, "gnatsd_varz_routes", "gauge").Value);
            var version = Single(metrics, "gnatsd_varz_version", "gauge");
            Assert.Equal(varzAfter.GetProperty("version").GetString(), version.Labels["value"]);
            Assert.Equal(1, version.Value);
            Assert.Equal(varzAfter.GetProperty("start").GetDateTimeOffset().ToUnixTimeMilliseconds(), Single(metrics, "gnatsd_varz_start", "gauge").Value);
            Assert.Equal(0, Single(metrics, "gnatsd_routez_num_routes", "gauge").Value);

            // /connz totals: the message and byte sums are counters, as the exporter types them.
            Assert.True(Single(metrics, "gnatsd_connz_num_connections", "gauge").Value >= 1);
            Assert.True(Single(metrics, "gnatsd_connz_in_msgs", "counter").Value >= 15);
            Assert.True(Single(metrics, "gnatsd_connz_subscriptions", "gauge").Value >= 1);

            // /jsz: the server's totals, the stream's state and the consumer's positions.
            Assert.Equal(jsz.GetProperty("streams").GetDouble(), Single(metrics, "jetstream_server_total_streams", "gauge").Value);
            Assert.Equal(jsz.GetProperty("messages").GetDouble(), Single(metrics, "jetstream_server_total_messages", "gauge").Value);
            var streamDetail = jsz.GetProperty("account_details").EnumerateArray()
                .SelectMany(a => a.GetProperty("stream_detail").EnumerateArray())
                .Single(s => s.GetProperty("name").GetString() == streamName);
            var state = streamDetail.GetProperty("state");
            var messages = Of(metrics, "jetstream_stream_total_messages", "gauge", "stream_name", streamName);
            Assert.Equal(StreamLabels, messages.Labels.Keys.ToArray());
            Assert.Equal(serverId, messages.Labels["server_id"]);
            Assert.Equal("$G", messages.Labels["account"]);
            Assert.Equal("true", messages.Labels["is_stream_leader"]);
            Assert.Equal(5, messages.Value);
            Assert.Equal(state.GetProperty("messages").GetDouble(), messages.Value);
            Assert.Equal(state.GetProperty("bytes").GetDouble(), Of(metrics, "jetstream_stream_total_bytes", "gauge", "stream_name", streamName).Value);
            Assert.Equal(state.GetProperty("last_seq").GetDouble(), Of(metrics, "jetstream_stream_last_seq", "gauge", "stream_name", streamName).Value);
            Assert.Equal(1, Of(metrics, "jetstream_stream_consumer_count", "gauge", "stream_name", streamName).Value);
            Assert.Equal(1000, Of(metrics, "jetstream_stream_limit_messages", "gauge", "stream_name", streamName).Value);

            var consumerDetail = streamDetail.GetProperty("consumer_detail").EnumerateArray().Single();
            var pending = Of(metrics, "jetstream_consumer_num_pending", "gauge", "consumer_name", "C1");
            Assert.Equal(ConsumerLabels, pending.Labels.Keys.ToArray());
            Assert.Equal(streamName, pending.Labels["stream_name"]);
            Assert.Equal("dashboard \"probe\"", pending.Labels["consumer_desc"]);
            Assert.Equal(consumerDetail.GetProperty("num_pending").GetDouble(), pending.Value);
            Assert.Equal(3, pending.Value);
            Assert.Equal(2, Of(metrics, "jetstream_consumer_num_ack_pending", "gauge", "consumer_name", "C1").Value);
            Assert.Equal(consumerDetail.GetProperty("delivered").GetProperty("consumer_seq").GetDouble(), Of(metrics, "jetstream_consumer_delivered_consumer_seq", "gauge", "consumer_name", "C1").Value);
            Assert.Equal(2, Of(metrics, "jetstream_consumer_delivered_stream_seq", "gauge", "consumer_name", "C1").Value);
            Assert.Equal(0, Of(metrics, "jetstream_consumer_ack_floor_stream_seq", "gauge", "consumer_name", "C1").Value);

            // The runtime's own, from prometheus-net.
            Assert.Contains(metrics["dotnet_collection_count_total"].Samples, s => s.Labels.GetValueOrDefault("generation") == "0");
        });

    [Fact]
    public Task A_deleted_stream_and_its_consumer_leave_the_metrics() =>
        fixture.WithJetStreamAsync(async server =>
        {
            using var cts = new CancellationTokenSource(NatsNetClient.TestTimeout);
            var ct = cts.Token;
            await using var nats = await NatsNetClient.ConnectAsync(server.Url);
            var js = new NatsJSContext(nats);
            var prefix = Subjects.NewPrefix();
            var streamName = NatsNetClient.NameFor(prefix);
            await js.CreateStreamAsync(new StreamConfig(streamName, [$"{prefix}.>"]), ct);
            (await js.PublishAsync($"{prefix}.a", "one", cancellationToken: ct)).EnsureSuccess();
            await js.CreateOrUpdateConsumerAsync(streamName, new ConsumerConfig("GONE") { AckPolicy = ConsumerConfigAckPolicy.Explicit }, ct);

            var before = await ScrapeAsync(server);
            Assert.Equal(1, Of(before, "jetstream_stream_total_messages", "gauge", "stream_name", streamName).Value);
            Assert.Equal(1, Of(before, "jetstream_consumer_num_pending", "gauge", "consumer_name", "GONE").Value);

            await js.DeleteStreamAsync(streamName, ct);
            var after = await ScrapeAsync(server);

            Assert.DoesNotContain(after.Values.SelectMany(f => f.Samples), s => s.Labels.GetValueOrDefault("stream_name") == streamName);
            Assert.Equal(0, Single(after, "jetstream_server_total_streams", "gauge").Value);
        });

    /// <summary>
    /// Courier's own figures: every acknowledged publish was in a group commit of the stream's log (so the
    /// group-commit histogram of <c>log="stream"</c> grows by the publishes, in at least one and at most that
    /// many commits), each commit fsynced (the fsync histogram grows), and the actor tree counts the stream's
    /// and the consumer's actors with their mailboxes.
    /// </summary>
    [Fact]
    public Task Courier_metrics_give_group_commit_sizes_fsync_latency_and_mailbox_depths() =>
        fixture.WithJetStreamAsync(async server =>
        {
            using var cts = new CancellationTokenSource(NatsNetClient.TestTimeout);
            var ct = cts.Token;
            await using var nats = await NatsNetClient.ConnectAsync(server.Url);
            var js = new NatsJSContext(nats);
            var prefix = Subjects.NewPrefix();
            var streamName = NatsNetClient.NameFor(prefix);
            await js.CreateStreamAsync(new StreamConfig(streamName, [$"{prefix}.>"]), ct);
            await js.CreateOrUpdateConsumerAsync(streamName, new ConsumerConfig("WATCH") { AckPolicy = ConsumerConfigAckPolicy.Explicit }, ct);

            var before = await ScrapeAsync(server);
            const int Published = 40;
            var acks = new List<Task<PubAckResponse>>();
            for (var i = 0; i < Published; i++)
            {
                acks.Add(js.PublishAsync($"{prefix}.x", $"m{i}", cancellationToken: ct).AsTask()); // concurrent: commits may take several
            }

            foreach (var ack in acks)
            {
                (await ack).EnsureSuccess();
            }

            var after = await ScrapeAsync(server);

            var commits = HistogramOf(after, "courier_store_group_commit_entries", "log", "stream");
            var (commitsBefore, entriesBefore) = HistogramOrNone(before, "courier_store_group_commit_entries", "log", "stream");
            Assert.Equal(Published, commits.Sum - entriesBefore); // the class's tests run one at a time: only these publishes
            Assert.InRange(commits.Count - commitsBefore, 1, Published);

            var fsyncs = HistogramOf(after, "courier_store_fsync_seconds");
            var fsyncsBefore = HistogramOrNone(before, "courier_store_fsync_seconds").Count;
            Assert.True(fsyncs.Count - fsyncsBefore >= commits.Count - commitsBefore, $"{fsyncs.Count - fsyncsBefore} fsyncs for {commits.Count - commitsBefore} group commits");
            Assert.True(fsyncs.Sum > 0, "fsyncs take time");

            foreach (var family in new[] { "courier_actors", "courier_mailbox_messages", "courier_mailbox_messages_max" })
            {
                Assert.All(PrometheusText.Family(after, family).Samples, s => Assert.Equal(["server_id", "actor"], s.Labels.Keys.ToArray()));
            }

            Assert.True(Of(after, "courier_actors", "gauge", "actor", "StreamActor").Value >= 1);
            Assert.True(Of(after, "courier_actors", "gauge", "actor", "ConsumerActor").Value >= 1);
            var total = Of(after, "courier_mailbox_messages", "gauge", "actor", "StreamActor").Value;
            Assert.InRange(Of(after, "courier_mailbox_messages_max", "gauge", "actor", "StreamActor").Value, 0, total);
        });

    [Fact]
    public async Task Metrics_are_the_text_format_even_when_the_scraper_offers_OpenMetrics()
    {
        using var http = new HttpClient { BaseAddress = fixture.Server.MonitorUri, Timeout = TimeSpan.FromSeconds(10) };
        using var request = new HttpRequestMessage(HttpMethod.Get, "/metrics");
        // What Prometheus 2.x sends.
        request.Headers.Accept.ParseAdd("application/openmetrics-text;version=1.0.0,application/openmetrics-text;version=0.0.1;q=0.75,text/plain;version=0.0.4;q=0.5,*/*;q=0.1");
        using var response = await http.SendAsync(request);
        var body = await response.Content.ReadAsStringAsync();

        Assert.Equal("text/plain", response.Content.Headers.ContentType?.MediaType);
        Assert.Contains(response.Content.Headers.ContentType!.Parameters, p => p is { Name: "version", Value: "0.0.4" });
        var metrics = PrometheusText.Parse(body);
        Assert.DoesNotContain("# EOF", body, StringComparison.Ordinal);
        Assert.Equal("counter", metrics["gnatsd_connz_in_msgs"].Type);
        Assert.Equal("gauge", metrics["jetstream_server_jetstream_disabled"].Type);
        Assert.Equal(1, Single(metrics, "jetstream_server_jetstream_disabled", "gauge").Value); // the shared server runs without -js
    }

    private static async Task<Dictionary<string, PrometheusFamily>> ScrapeAsync(ServerProcess server)
    {
        using var monitor = new MonitorClient(server);
        var (status, body, contentType) = await monitor.GetAsync("/metrics");
        Assert.True(status == System.Net.HttpStatusCode.OK, $"/metrics: {(int)status} {body}");
        Assert.Equal("text/plain", contentType);
        return PrometheusText.Parse(body);
    }

    /// <summary>A histogram's <c>_count</c> and <c>_sum</c>, after checking its buckets rise to a <c>+Inf</c> bucket equal to the count.</summary>
    private static (double Count, double Sum) HistogramOf(Dictionary<string, PrometheusFamily> metrics, string name, string? label = null, string? value = null)
    {
        var samples = PrometheusText.Family(metrics, name, "histogram").Samples.Where(s => label is null || s.Labels.GetValueOrDefault(label) == value).ToList();
        var count = Assert.Single(samples, s => s.Name == $"{name}_count").Value;
        var sum = Assert.Single(samples, s => s.Name == $"{name}_sum").Value;
        var buckets = samples.Where(s => s.Name == $"{name}_bucket").ToList();
        Assert.True(buckets.Count > 2, $"{name}: {buckets.Count} buckets");
        for (var i = 1; i < buckets.Count; i++)
        {
            Assert.True(buckets[i].Value >= buckets[i - 1].Value, $"{name}: bucket le={buckets[i].Labels["le"]} below the one before");
        }

        Assert.Equal("+Inf", buckets[^1].Labels["le"]);
        Assert.Equal(count, buckets[^1].Value);
        return (count, sum);
    }

    /// <summary>As <see cref="HistogramOf"/>, or zeros when the histogram has no series yet (nothing recorded).</summary>
    private static (double Count, double Sum) HistogramOrNone(Dictionary<string, PrometheusFamily> metrics, string name, string? label = null, string? value = null) =>
        metrics.TryGetValue(name, out var family) && family.Samples.Any(s => label is null || s.Labels.GetValueOrDefault(label) == value)
            ? HistogramOf(metrics, name, label, value)
            : (0, 0);

    private static PrometheusSample Single(Dictionary<string, PrometheusFamily> metrics, string name, string type) =>
        Assert.Single(PrometheusText.Family(metrics, name, type).Samples);

    private static PrometheusSample Of(Dictionary<string, PrometheusFamily> metrics, string name, string type, string label, string value) =>
        Assert.Single(PrometheusText.Family(metrics, name, type).Samples, s => s.Labels.GetValueOrDefault(label) == value);
}
