using System.Diagnostics;
using System.Text;
using System.Text.Json;
using System.Text.Json.Serialization.Metadata;
using Courier.Actors.Connections;
using Courier.Actors.Events;
using Courier.Actors.Server;
using Microsoft.Extensions.Logging;

namespace Courier.Gateway.Monitoring;

/// <summary>
/// The system account's requests and the periodic statsz, as nats-server 2.9.10 answers them
/// (server/events.go initEventTracking): <c>$SYS.REQ.SERVER.PING</c> (statsz of every server),
/// <c>$SYS.REQ.SERVER.PING.&lt;kind&gt;</c> and <c>$SYS.REQ.SERVER.&lt;id&gt;.&lt;kind&gt;</c> for STATSZ,
/// VARZ, CONNZ, SUBSZ, ROUTEZ, GATEWAYZ, LEAFZ, JSZ, HEALTHZ, ACCOUNTZ, and <c>$SYS.REQ.ACCOUNT.&lt;account&gt;.&lt;kind&gt;</c>
/// for CONNZ, SUBSZ, LEAFZ, JSZ, INFO, STATZ, CONNS. Answers are <c>{"server":...,"data":...}</c> (statsz:
/// <c>{"server":...,"statsz":...}</c>) with the monitoring pages' JSON as data. nats-server 2.10's IDZ, KICK
/// and LDM are answered too (<c>SystemAccountService.Control.cs</c>). <c>$SYS.SERVER.&lt;id&gt;.STATSZ</c>
/// goes out 250 ms after start, then at doubling intervals up to every 30 s, when someone listens.
/// </summary>
internal sealed partial class SystemAccountService : IAsyncDisposable
{
    private static readonly TimeSpan FirstStatsz = TimeSpan.FromMilliseconds(250); // nats-server's first cstatsz
    private static readonly TimeSpan StatszInterval = TimeSpan.FromSeconds(30); // nats-server's eventsHBInterval

    private readonly Broker _broker;
    private readonly SystemEvents _events;
    private readonly MonitoringPages _pages;
    private readonly ILogger _log;
    private readonly Timer _statszTimer;
    private readonly string _statszSubject;
    private TimeSpan _statszDelay = FirstStatsz;

    private SystemAccountService(Broker broker, SystemEvents events, MonitoringPages pages, ILogger log)
    {
        _broker = broker;
        _events = events;
        _pages = pages;
        _log = log;
        _statszSubject = $"$SYS.SERVER.{broker.ServerId}.STATSZ";
        _statszTimer = new Timer(_ => OnStatszTimer(), null, Timeout.Infinite, Timeout.Infinite);
    }

    /// <summary>Subscribes the system account's requests; null when the server has no system account.</summary>
    public static async Task<SystemAccountService?> StartAsync(Broker broker, MonitoringPages pages, ILogger log, Func<string?>? reload = null)
    {
        if (broker.Events is not { } events)
        {
            return null;
        }

        var service = new SystemAccountService(broker, events, pages, log) { _reload = reload };
        var client = events.Client;
        client.Subscribe("$SYS.REQ.SERVER.PING", null, service.OnRequests);
        client.Subscribe("$SYS.REQ.SERVER.PING.*", null, service.OnRequests);
        client.Subscribe($"$SYS.REQ.SERVER.{broker.ServerId}.*", null, service.OnRequests);
        client.Subscribe("$SYS.REQ.ACCOUNT.*.*", null, service.OnRequests);
        await client.FlushAsync().ConfigureAwait(false);
        service._statszTimer.Change(FirstStatsz, Timeout.InfiniteTimeSpan);
        return service;
    }

    private void OnRequests(IReadOnlyList<InternalMessage> messages)
    {
        foreach (var m in messages)
        {
            try
            {
                Handle(m);
            }
            catch (Exception e) when (e is JsonException or InvalidOperationException or IOException)
            {
                Log.RequestFailed(_log, m.Subject, e.Message);
            }
        }
    }

    private void Handle(InternalMessage m)
    {
        var tokens = m.Subject.Split('.');
        if (m.Subject == "$SYS.REQ.SERVER.PING")
        {
            StatszRequest(m);
            return;
        }

        if (tokens is ["$SYS", "REQ", "SERVER", var target, var kind])
        {
            if (target != "PING" && target != _broker.ServerId)
            {
                return;
            }

            ServerRequest(kind, target == "PING", m);
            return;
        }

        if (tokens is ["$SYS", "REQ", "ACCOUNT", var account, var accountKind])
        {
            AccountRequest(account, accountKind, m);
        }
    }

    // $SYS.REQ.SERVER.PING and ...STATSZ: {"server":...,"statsz":...}; no reply means the broadcast subject.
    private void StatszRequest(InternalMessage m)
    {
        if (!TryOptions(m, out var options, out var error))
        {
            Reply(m.ReplyTo ?? _statszSubject, error!);
            return;
        }

        if (Filtered(options))
        {
            return;
        }

        PublishStatsz(m.ReplyTo ?? _statszSubject);
    }

    private void ServerRequest(string kind, bool ping, InternalMessage m)
    {
        switch (kind)
        {
            case "STATSZ":
                StatszRequest(m);
                return;
            case "IDZ":
                IdzRequest(m);
                return;
            case "KICK" or "LDM":
                if (!ping) // nats-server subscribes them by its id only
                {
                    ClientControlRequest(kind, m);
                }

                return;
            case "RELOAD":
                if (!ping)
                {
                    ReloadRequest(m);
                }

                return;
        }

        if (!TryAccept(m, out var reply, out var options))
        {
            return;
        }

        switch (kind)
        {
            case "VARZ":
                Reply(reply, Data(_pages.Varz(), GatewayJsonContext.Default.Varz));
                break;
            case "CONNZ":
                Reply(reply, ConnzAnswer(options, null));
                break;
            case "SUBSZ":
                Reply(reply, SubszAnswer(options));
                break;
            case "ROUTEZ":
                Reply(reply, Data(_pages.Routez(), GatewayJsonContext.Default.Routez));
                break;
            case "HEALTHZ":
                // nats-server 2.10's HealthzEventOptions; the answer keeps its status_code.
                _ = ReplyHealthzAsync(reply, new HealthzQuery(
                    BoolOption(options, "js-enabled-only") || BoolOption(options, "js-enabled"), BoolOption(options, "js-server-only"),
                    StringOption(options, "account") ?? "", StringOption(options, "stream") ?? "", StringOption(options, "consumer") ?? "", BoolOption(options, "details")));
                break;
            case "ACCOUNTZ":
                var account = StringOption(options, "account");
                if (string.IsNullOrEmpty(account))
                {
                    Reply(reply, Data(_pages.AccountList(), GatewayJsonContext.Default.Accountz));
                }
                else if (_pages.AccountDetail(account) is { } detail)
                {
                    Reply(reply, Data(new Accountz { ServerId = _broker.ServerId, Now = DateTime.UtcNow, Account = detail }, GatewayJsonContext.Default.Accountz));
                }
                else
                {
                    Reply(reply, Failure($"Account {account} does not exist"));
                }

                break;
            case "JSZ":
                _ = ReplyJszAsync(reply, JszQueryOf(options));
                break;
            case "LEAFZ":
                // nats-server's LeafzEventOptions: subscriptions, account.
                Reply(reply, Data(_pages.Leafz(BoolOption(options, "subscriptions"), StringOption(options, "account")), GatewayJsonContext.Default.Leafz));
                break;
            case "GATEWAYZ":
                Reply(reply, Data(_pages.Gatewayz(GatewayzQueryOf(options)), GatewayJsonContext.Default.Gatewayz));
                break;
            default:
                return;
        }
    }

    private async Task ReplyHealthzAsync(string reply, HealthzQuery query)
    {
        try
        {
            Reply(reply, Data(await _pages.HealthzAsync(query).ConfigureAwait(false), GatewayJsonContext.Default.Healthz));
        }
        catch (Exception e) when (e is Akka.Actor.AskTimeoutException or TaskCanceledException)
        {
            Reply(reply, Failure(e.Message));
        }
    }

    private async Task ReplyJszAsync(string reply, JszQuery query)
    {
        try
        {
            // No answer at all to leader_only where JetStream is off (nats-server's errSkipZreq).
            if (await _pages.JszAsync(query).ConfigureAwait(false) is { } jsz)
            {
                Reply(reply, Data(jsz, GatewayJsonContext.Default.Jsz));
            }
        }
        catch (Exception e) when (e is Akka.Actor.AskTimeoutException or TaskCanceledException)
        {
            Reply(reply, Failure(e.Message));
        }
    }

    // The account's own detail only: nothing of another account is asked for, so none can leak.
    private async Task ReplyAccountJszAsync(string reply, Courier.Actors.Accounts.Account account, JszQuery query)
    {
        try
        {
            var detail = await _pages.JszAccountAsync(account, query).ConfigureAwait(false);
            Reply(reply, Data(detail, GatewayJsonContext.Default.JszAccountDetail));
        }
        catch (Exception e) when (e is Akka.Actor.AskTimeoutException or TaskCanceledException)
        {
            Reply(reply, Failure(e.Message));
        }
    }

    private void AccountRequest(string accountName, string kind, InternalMessage m)
    {
        if (kind == "CONNS")
        {
            // As nats-server's connsRequest: only a server with local connections of the account answers.
            if (_broker.Accounts.Find(accountName) is { } tracked && !string.IsNullOrEmpty(m.ReplyTo))
            {
                var conns = _events.AccountConnections(tracked);
                if (conns.Connections > 0)
                {
                    _events.Publish(m.ReplyTo, conns, EventsJsonContext.Default.AccountConnections);
                }
            }

            return;
        }

        if (!TryAccept(m, out var reply, out var options))
        {
            return;
        }

        switch (kind)
        {
            case "CONNZ":
                Reply(reply, ConnzAnswer(options, accountName));
                break;
            case "SUBSZ":
                Reply(reply, Data(AccountSubsz(accountName), GatewayJsonContext.Default.Subsz));
                break;
            case "INFO":
                if (_pages.AccountDetail(accountName) is { } detail)
                {
                    Reply(reply, Data(detail, GatewayJsonContext.Default.AccountzDetail));
                }
                else
                {
                    Reply(reply, Failure($"Account {accountName} does not exist"));
                }

                break;
            case "STATZ":
                // nats-server's AccountStatzEventOptions: "accounts" (the PING form only; a named account
                // is the list) and "include_unused"; nothing to report is no answer unless unused ones were asked for.
                var includeUnused = BoolOption(options, "include_unused");
                var statz = _pages.AccountStatz(accountName == "PING" ? StringListOption(options, "accounts") : [accountName], includeUnused);
                if (statz.Accounts.Count > 0 || includeUnused)
                {
                    Reply(reply, Data(statz, GatewayJsonContext.Default.AccountStatz));
                }

                break;
            case "LEAFZ":
                // nats-server's LeafzEventOptions with the account taken from the subject.
                Reply(reply, Data(_pages.Leafz(BoolOption(options, "subscriptions"), accountName), GatewayJsonContext.Default.Leafz));
                break;
            case "JSZ":
                // As nats-server's JszAccount: the errors, else the account's AccountDetail.
                if (!_broker.Options.JetStream)
                {
                    Reply(reply, Failure("jetstream not enabled"));
                }
                else if (_broker.Accounts.Find(accountName) is not { } jsAccount)
                {
                    Reply(reply, Failure($"account \"{accountName}\" not found"));
                }
                else if (jsAccount.JetStream is null)
                {
                    Reply(reply, Failure($"account \"{accountName}\" not jetstream enabled"));
                }
                else
                {
                    _ = ReplyAccountJszAsync(reply, jsAccount, JszQueryOf(options));
                }

                break;
            default:
                return;
        }
    }

    private Subsz AccountSubsz(string accountName)
    {
        var details = new List<SubszDetail>();
        foreach (var c in _broker.Clients)
        {
            if (c.IsInternal || c.IsServerLink || c.Account.Name != accountName)
            {
                continue;
            }

            foreach (var sub in c.SubscriptionsSnapshot())
            {
                details.Add(new SubszDetail
                {
                    Account = accountName,
                    Subject = sub.Subject,
                    Queue = sub.Queue,
                    Sid = Encoding.ASCII.GetString(sub.Sid),
                    Msgs = sub.Delivered,
                    Cid = c.Id,
                });
            }
        }

        return new Subsz
        {
            ServerId = _broker.ServerId,
            Now = DateTime.UtcNow,
            NumSubscriptions = _broker.Accounts.Find(accountName)?.Space.Count ?? 0,
            Total = details.Count,
            Offset = 0,
            Limit = MonitoringPages.DefaultSubszLimit,
            Subscriptions = details,
        };
    }

    private void OnStatszTimer()
    {
        try
        {
            if (_events.HasInterest(_statszSubject))
            {
                PublishStatsz(_statszSubject);
            }
        }
        catch (Exception e) when (e is InvalidOperationException or ObjectDisposedException)
        {
            return;
        }

        // As nats-server's heartbeatStatsz: 250 ms, then doubling up to the 30 s heartbeat.
        _statszDelay = _statszDelay * 2 > StatszInterval ? StatszInterval : _statszDelay * 2;
        try
        {
            _statszTimer.Change(_statszDelay, Timeout.InfiniteTimeSpan);
        }
        catch (ObjectDisposedException)
        {
        }
    }

    private void PublishStatsz(string subject)
    {
        var server = JsonSerializer.SerializeToUtf8Bytes(_events.NextServer(), EventsJsonContext.Default.EventServer);
        var statsz = JsonSerializer.SerializeToUtf8Bytes(BuildStatsz(), GatewayJsonContext.Default.Statsz);
        _events.Client.Publish(subject, null, default, Envelope(server, "statsz", statsz));
    }

    private Statsz BuildStatsz()
    {
        var totals = _broker.Monitoring.GetTotals();
        using var process = Process.GetCurrentProcess();
        var uptime = DateTime.UtcNow - _broker.Started;
        var active = new HashSet<string>(StringComparer.Ordinal);
        foreach (var c in _broker.Clients)
        {
            if (!c.IsInternal && !c.IsServerLink)
            {
                active.Add(c.Account.Name);
            }
        }

        var routes = _broker.Monitoring.GetRoutes();
        return new Statsz
        {
            Start = _broker.Started,
            Mem = process.WorkingSet64,
            Cores = Environment.ProcessorCount,
            Cpu = uptime.TotalSeconds <= 0 ? 0 : Math.Round(100 * process.TotalProcessorTime.TotalSeconds / uptime.TotalSeconds, 2),
            Connections = _broker.Monitoring.ConnectionCount,
            TotalConnections = _broker.Stats.TotalConnections,
            ActiveAccounts = active.Count,
            Subscriptions = _broker.Monitoring.SubscriptionCount,
            Sent = new StatszData { Msgs = totals.OutMsgs, Bytes = totals.OutBytes },
            Received = new StatszData { Msgs = totals.InMsgs, Bytes = totals.InBytes },
            SlowConsumers = _broker.Stats.SlowConsumers,
            Routes = routes.Count == 0 ? null : [.. routes.Select(r => new StatszRoute
            {
                Rid = r.Rid,
                Name = string.IsNullOrEmpty(r.RemoteName) ? null : r.RemoteName,
                Sent = new StatszData { Msgs = r.OutMsgs, Bytes = r.OutBytes },
                Received = new StatszData { Msgs = r.InMsgs, Bytes = r.InBytes },
                Pending = r.PendingBytes,
            })],
            ActiveServers = 1 + routes.Count,
            JetStream = _broker.Options.JetStream ? new VarzJetStream { Config = VarzJetStreamConfig.From(_broker.Options, "") } : null,
        };
    }

    private byte[] Data<T>(T value, JsonTypeInfo<T> type) =>
        Envelope(JsonSerializer.SerializeToUtf8Bytes(_events.NextServer(), EventsJsonContext.Default.EventServer), "data", JsonSerializer.SerializeToUtf8Bytes(value, type));

    // A handler's failure: nats-server's zReq then sends "data":null beside the error.
    private byte[] Failure(string description)
    {
        var error = JsonSerializer.SerializeToUtf8Bytes(new EventError { Code = 500, Description = description }, EventsJsonContext.Default.EventError);
        return Envelope(JsonSerializer.SerializeToUtf8Bytes(_events.NextServer(), EventsJsonContext.Default.EventServer), "data", [.. "null,\"error\":"u8, .. error]);
    }

    private byte[] Error(int code, string description) =>
        Envelope(JsonSerializer.SerializeToUtf8Bytes(_events.NextServer(), EventsJsonContext.Default.EventServer), "error",
            JsonSerializer.SerializeToUtf8Bytes(new EventError { Code = code, Description = description }, EventsJsonContext.Default.EventError));

    // {"server":<server>,"<key>":<value>}
    private static byte[] Envelope(byte[] server, string key, byte[] value)
    {
        var buffer = new byte[server.Length + value.Length + key.Length + 16];
        var p = 0;
        p += Copy("{\"server\":"u8, buffer, p);
        p += Copy(server, buffer, p);
        p += Copy(",\""u8, buffer, p);
        p += Encoding.ASCII.GetBytes(key, buffer.AsSpan(p));
        p += Copy("\":"u8, buffer, p);
        p += Copy(value, buffer, p);
        buffer[p++] = (byte)'}';
        return buffer[..p];
    }

    private static int Copy(ReadOnlySpan<byte> source, byte[] destination, int at)
    {
        source.CopyTo(destination.AsSpan(at));
        return source.Length;
    }

    private void Reply(string subject, byte[] payload) => _events.Client.Publish(subject, null, default, payload);

    // A request to answer: it has a reply subject, its options parse (else the error is the answer)
    // and its server filter (nats-server's EventFilterOptions) selects this server.
    private bool TryAccept(InternalMessage m, out string reply, out JsonElement options)
    {
        reply = m.ReplyTo ?? "";
        options = default;
        if (reply.Length == 0)
        {
            return false;
        }

        if (!TryOptions(m, out options, out var error))
        {
            Reply(reply, error!);
            return false;
        }

        return !Filtered(options);
    }

    // The request's JSON options (nats-server's *EventOptions); an empty body is no options.
    private bool TryOptions(InternalMessage m, out JsonElement options, out byte[]? error)
    {
        options = default;
        error = null;
        if (m.Payload.Length == 0)
        {
            return true;
        }

        try
        {
            using var document = JsonDocument.Parse(m.Payload);
            options = document.RootElement.Clone();
            if (options.ValueKind != JsonValueKind.Object)
            {
                error = Error(400, $"json: cannot unmarshal {options.ValueKind.ToString().ToLowerInvariant()} into Go value");
                return false;
            }

            return true;
        }
        catch (JsonException e)
        {
            error = Error(400, e.Message);
            return false;
        }
    }

    // nats-server's filterRequest: server_name, host, cluster contained in ours; tags all ours; domain equal.
    private bool Filtered(JsonElement options)
    {
        if (options.ValueKind != JsonValueKind.Object)
        {
            return false;
        }

        if (StringOption(options, "server_name") is { Length: > 0 } name && !_broker.ServerName.Contains(name, StringComparison.Ordinal))
        {
            return true;
        }

        if (StringOption(options, "host") is { Length: > 0 } host && !_broker.Options.Host.Contains(host, StringComparison.Ordinal))
        {
            return true;
        }

        if (StringOption(options, "cluster") is { Length: > 0 } cluster && !(_broker.Routes?.ClusterName ?? "").Contains(cluster, StringComparison.Ordinal))
        {
            return true;
        }

        // tags: every one among server_tags (jwt's TagList.Contains: trimmed, any case).
        foreach (var tag in StringListOption(options, "tags") ?? [])
        {
            if (!_broker.Options.Tags.Contains(tag.Trim().ToLowerInvariant()))
            {
                return true;
            }
        }

        return StringOption(options, "domain") is { Length: > 0 } domain && domain != _broker.Options.JetStreamDomain;
    }

    // nats-server's ConnzOptions as JSON; a sort it does not know, or one it refuses, fails the request as its zReq does.
    private byte[] ConnzAnswer(JsonElement options, string? account)
    {
        if (!ConnzQuery.TryParseSort(StringOption(options, "sort") ?? "", out var sort, out var error))
        {
            return Failure(error);
        }

        var query = new ConnzQuery(
            Sort: sort,
            Subscriptions: BoolOption(options, "subscriptions"),
            SubscriptionsDetail: BoolOption(options, "subscriptions_detail"),
            Auth: BoolOption(options, "auth"),
            Offset: IntOption(options, "offset"),
            Limit: IntOption(options, "limit"),
            Cid: (ulong)Math.Max(0, IntOption(options, "cid")),
            MqttClient: StringOption(options, "mqtt_client"),
            State: IntOption(options, "state") switch { 1 => ConnzState.Closed, 2 => ConnzState.Any, _ => ConnzState.Open },
            User: StringOption(options, "user"),
            Account: account ?? StringOption(options, "acc"));
        return query.Refusal() is { } refusal ? Failure(refusal) : Data(_pages.Connz(query), GatewayJsonContext.Default.Connz);
    }

    // nats-server's SubszOptions as JSON: offset, limit, subscriptions, account, test.
    private byte[] SubszAnswer(JsonElement options)
    {
        var query = new SubszQuery(BoolOption(options, "subscriptions"), IntOption(options, "offset"), IntOption(options, "limit"), StringOption(options, "account"), StringOption(options, "test"));
        return query.Refusal() is { } refusal ? Failure(refusal) : Data(_pages.Subsz(query), GatewayJsonContext.Default.Subsz);
    }

    // nats-server's JSzOptions as JSON: account, accounts, streams, consumer, config, leader_only, offset, limit.
    private static JszQuery JszQueryOf(JsonElement options) => new(
        Account: StringOption(options, "account"),
        Accounts: BoolOption(options, "accounts"),
        Streams: BoolOption(options, "streams"),
        Consumers: BoolOption(options, "consumer"),
        Config: BoolOption(options, "config"),
        LeaderOnly: BoolOption(options, "leader_only"),
        Offset: IntOption(options, "offset"),
        Limit: IntOption(options, "limit"));

    // nats-server's GatewayzOptions as JSON: name (the remote gateway), accounts, account_name (makes accounts implicit).
    private static GatewayzQuery GatewayzQueryOf(JsonElement options)
    {
        var accountName = StringOption(options, "account_name");
        return new GatewayzQuery(StringOption(options, "name"), BoolOption(options, "accounts") || !string.IsNullOrEmpty(accountName), accountName);
    }

    // A JSON array of strings (nats-server's []string option); other elements are skipped.
    private static List<string>? StringListOption(JsonElement options, string name)
    {
        if (options.ValueKind != JsonValueKind.Object || !options.TryGetProperty(name, out var v) || v.ValueKind != JsonValueKind.Array)
        {
            return null;
        }

        var list = new List<string>(v.GetArrayLength());
        foreach (var item in v.EnumerateArray())
        {
            if (item.ValueKind == JsonValueKind.String)
            {
                list.Add(item.GetString()!);
            }
        }

        return list;
    }

    private static string? StringOption(JsonElement options, string name) =>
        options.ValueKind == JsonValueKind.Object && options.TryGetProperty(name, out var v) && v.ValueKind == JsonValueKind.String ? v.GetString() : null;

    private static bool BoolOption(JsonElement options, string name) =>
        options.ValueKind == JsonValueKind.Object && options.TryGetProperty(name, out var v) && v.ValueKind == JsonValueKind.True;

    private static int IntOption(JsonElement options, string name) =>
        options.ValueKind == JsonValueKind.Object && options.TryGetProperty(name, out var v) && v.ValueKind == JsonValueKind.Number && v.TryGetInt32(out var i) ? i : 0;

    public async ValueTask DisposeAsync() => await _statszTimer.DisposeAsync().ConfigureAwait(false);

    private static partial class Log
    {
        [LoggerMessage(EventId = 1, Level = LogLevel.Error, Message = "Error answering the system account request on {Subject}: {Reason}")]
        public static partial void RequestFailed(ILogger logger, string subject, string reason);
    }
}
