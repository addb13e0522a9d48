using System.Text.Json;

namespace Courier.Gateway.Monitoring;

/// <summary>nats-server 2.10's HealthzOptions, from /healthz's query or a HEALTHZ system request's JSON.</summary>
internal sealed record HealthzQuery(bool JsEnabledOnly = false, bool JsServerOnly = false, string Account = "", string Stream = "", string Consumer = "", bool Details = false);

internal sealed partial class MonitoringPages
{
    private const string Unavailable = "unavailable";

    /// <summary>
    /// /healthz and HEALTHZ as nats-server 2.10.22's <c>healthz</c>: the option checks (a stream needs an account,
    /// a consumer a stream: 400), then the cluster (Courier's Akka membership where nats-server checks its meta
    /// leader), then the JetStream assets this server holds: an account, stream or consumer asked for and not
    /// here is a 404, a replicated stream asked for whose group has no leader is not current (503). With
    /// <c>details</c> every problem is an entry of <c>errors</c> and the status is <c>ok</c> or <c>error</c>.
    /// </summary>
    /// <remarks>
    /// As nats-server on a single server, an account or stream is found through the store directory, so
    /// only file streams count (a memory stream has no directory). Clustered, Courier looks at the streams
    /// this server holds, where nats-server looks up the account in its meta layer first: an account whose
    /// streams are all on other servers is a 404 here, and ok there. Without a stream asked for, nats-server
    /// also checks that every stream and consumer assigned here is current; Courier does not sweep yet: its
    /// replicas are not placed by a committed meta assignment (issue 34), and a replica left behind by a
    /// scale-down that a restarted member missed has no leader ever, so the sweep would keep that node
    /// unhealthy until the replica is removed by hand (seen in the cluster tests).
    /// </remarks>
    public async Task<Healthz> HealthzAsync(HealthzQuery query)
    {
        var health = new HealthzBuilder(query.Details);
        if (query.Account.Length == 0 && query.Stream.Length > 0)
        {
            return health.Fail(400, "error", "BAD_REQUEST", "\"account\" must not be empty when checking stream health");
        }

        if (query.Stream.Length == 0 && query.Consumer.Length > 0)
        {
            return health.Fail(400, "error", "BAD_REQUEST", "\"stream\" must not be empty when checking consumer health");
        }

        var clustered = _broker.Routes is not null && _broker.ClusterView.ClusterPeersExpected;
        if (!_broker.Options.JetStream)
        {
            // nats-server stops here; Courier's own check: a clustered node that routes reach but that is not
            // (or no longer) an Up member of the Akka cluster.
            return clustered && !_broker.ClusterView.IsClusterMember
                ? health.Fail(503, Unavailable, "CONNECTION", "not a member of the cluster")
                : health.Done();
        }

        if (query.JsEnabledOnly)
        {
            return health.Done();
        }

        if (clustered && !_broker.ClusterView.IsClusterMember)
        {
            return health.Fail(503, Unavailable, "JETSTREAM", "not a member of the cluster");
        }

        if (query.JsServerOnly && clustered)
        {
            return health.Done();
        }

        var jsz = await JszAsync(new JszQuery(Accounts: true, Streams: true, Consumers: true, Config: true)).ConfigureAwait(false);
        var accounts = (jsz?.AccountDetails ?? [])
            .Select(a => (a.Name, Streams: (a.Streams ?? []).Where(s => clustered || IsFileStream(s)).ToList()))
            .Where(a => a.Streams.Count > 0 && (query.Account.Length == 0 || a.Name == query.Account))
            .ToList();
        if (query.Account.Length > 0 && accounts.Count == 0)
        {
            return health.Fail(404, Unavailable, "ACCOUNT", $"JetStream account \"{query.Account}\" not found", query.Account);
        }

        if (query.Stream.Length > 0)
        {
            var stream = accounts.SelectMany(a => a.Streams).FirstOrDefault(s => s.Name == query.Stream);
            if (stream is null)
            {
                return health.Fail(404, Unavailable, "STREAM", $"JetStream stream \"{query.Stream}\" not found on account \"{query.Account}\"", query.Account, query.Stream);
            }

            if (query.Consumer.Length > 0 && !(stream.Consumers ?? []).Any(c => ConsumerName(c) == query.Consumer))
            {
                return health.Fail(
                    404, Unavailable, "CONSUMER", $"JetStream consumer \"{query.Consumer}\" not found for stream \"{query.Stream}\" on account \"{query.Account}\"",
                    query.Account, query.Stream, query.Consumer);
            }

            // A replicated stream is current here once its group has a leader (nats-server: its Raft node is healthy).
            if (stream.Cluster is { Replicas.Count: > 0 } cluster && string.IsNullOrEmpty(cluster.Leader))
            {
                health.Add(503, Unavailable, "STREAM", $"JetStream stream '{query.Account} > {stream.Name}' is not current", query.Account, stream.Name);
            }
        }

        return health.Done();
    }

    private static bool IsFileStream(JszStreamDetail stream) =>
        stream.Config is { ValueKind: JsonValueKind.Object } config && config.TryGetProperty("storage", out var storage) && storage.ValueEquals("file"u8);

    private static string? ConsumerName(JsonElement consumer) =>
        consumer.ValueKind == JsonValueKind.Object && consumer.TryGetProperty("name", out var name) ? name.GetString() : null;

    /// <summary>The answer under construction: one error ends it without details; with details each is listed.</summary>
    private sealed class HealthzBuilder(bool details)
    {
        private readonly List<HealthzError> _errors = [];
        private int _statusCode;
        private string _status = "ok";
        private string? _error;

        /// <summary>Records a problem; false when the answer ends with it (no details).</summary>
        public bool Add(int statusCode, string status, string type, string error, string account = "", string stream = "", string consumer = "")
        {
            _statusCode = statusCode;
            if (!details)
            {
                _status = status;
                _error = error;
                return false;
            }

            _errors.Add(new HealthzError { Type = type, Account = NullIfEmpty(account), Stream = NullIfEmpty(stream), Consumer = NullIfEmpty(consumer), Error = error });
            return true;
        }

        private static string? NullIfEmpty(string text) => text.Length > 0 ? text : null;

        public Healthz Fail(int statusCode, string status, string type, string error, string account = "", string stream = "", string consumer = "")
        {
            Add(statusCode, status, type, error, account, stream, consumer);
            return Done();
        }

        public Healthz Done()
        {
            var failed = _error is not null || _errors.Count > 0;
            return new Healthz
            {
                Status = details ? (failed ? "error" : "ok") : _status,
                StatusCode = _statusCode != 0 ? _statusCode : failed ? 503 : 200,
                Error = _error,
                Errors = _errors.Count > 0 ? _errors : null,
            };
        }
    }
}
