using System.Diagnostics;
using Courier.Actors.Server;
using Courier.Protocols;

namespace Courier.Gateway.Monitoring;

/// <summary>
/// The monitoring pages (varz, connz, routez, subsz, jsz, accountz) with nats-server's JSON shapes,
/// built from the broker's state: served over HTTP by <see cref="MonitoringServer"/> and, as the
/// <c>data</c> of <c>$SYS.REQ.SERVER.*</c> answers, by <see cref="SystemAccountService"/>.
/// </summary>
internal sealed partial class MonitoringPages
{
    private readonly Broker _broker;
    private readonly DateTime _configLoadTime = DateTime.UtcNow;

    public MonitoringPages(Broker broker) => _broker = broker;

    /// <summary>The HTTP monitoring port bound, once it is (varz <c>http_port</c>).</summary>
    public int? HttpListenPort { get; set; }

    /// <summary>The leaf node port actually listened on, once known (a configured -1 picks one).</summary>
    public int? LeafListenPort { get; set; }

    /// <summary>The MQTT port actually listened on, once known.</summary>
    public int? MqttListenPort { get; set; }

    /// <summary>The WebSocket port actually listened on, once known.</summary>
    public int? WebSocketListenPort { get; set; }

    /// <summary>The monitoring pages nats-server counts in /varz <c>http_req_stats</c>, by path, as asked for over HTTP.</summary>
    public System.Collections.Concurrent.ConcurrentDictionary<string, ulong> HttpRequests { get; } = new(StringComparer.Ordinal);

    /// <summary>Counts an HTTP request of <paramref name="path"/> (nats-server counts before it answers).</summary>
    public void CountRequest(string path) => HttpRequests.AddOrUpdate(path, 1, (_, n) => n + 1);

    /// <summary>Whether monitoring is served over HTTPS (varz then shows no <c>http_port</c>).</summary>
    public bool Https { get; set; }

    /// <summary>/accountz: the account names (and the system account).</summary>
    public Accountz AccountList() =>
        new() { ServerId = _broker.ServerId, Now = DateTime.UtcNow, SystemAccount = _broker.SystemAccount?.Name, Accounts = _broker.Monitoring.GetAccountNames() };

    /// <summary>/accountz?acc=: one account's detail (nats-server's AccountInfo); null when there is no such account.</summary>
    public AccountzDetail? AccountDetail(string name)
    {
        if (_broker.Monitoring.GetAccount(name) is not { } account)
        {
            return null;
        }

        return new AccountzDetail
        {
            Name = account.Name,
            UpdateTime = _broker.Started,
            IsSystem = _broker.SystemAccount?.Name == account.Name,
            JetStream = account.JetStream,
            ClientConnections = account.ClientConnections,
            Subscriptions = account.Subscriptions,
            Exports = [.. account.Exports.Select(e => new AccountzExport
            {
                Subject = e.Subject,
                Type = e.IsService ? "service" : "stream",
                ResponseType = e.IsService ? e.ResponseType switch { ServiceResponseType.Streamed => "Streamed", ServiceResponseType.Chunked => "Chunked", _ => "Singleton" } : null,
                ApprovedAccounts = e.Accounts is { Count: > 0 } approved ? approved : null,
            })],
            Imports = [.. account.Imports.Select(i => new AccountzImport
            {
                // A service import as nats-server shows it: the local subject, and "to" the exporter's.
                Subject = i.IsService ? i.To ?? i.Subject : i.Subject,
                Account = i.Account,
                To = i.IsService ? i.Subject : null,
                LocalSubject = i.IsService ? null : i.Prefix is { } prefix ? $"{prefix.TrimEnd('.')}.{i.Subject}" : i.To ?? i.Subject,
                Type = i.IsService ? "service" : "stream",
            })],
        };
    }

    public Routez Routez()
    {
        var now = DateTime.UtcNow;
        var routes = _broker.Monitoring.GetRoutes();
        return new Routez
        {
            ServerId = _broker.ServerId,
            ServerName = _broker.ServerName,
            Now = now,
            NumRoutes = routes.Count,
            Routes = [.. routes.Select(r => new RoutezRoute
            {
                Rid = r.Rid,
                RemoteId = r.RemoteId,
                RemoteName = r.RemoteName,
                DidSolicit = r.DidSolicit,
                IsConfigured = r.IsConfigured,
                Ip = r.Ip,
                Port = r.Port,
                Start = r.Start,
                LastActivity = r.LastActivity,
                Uptime = GoDuration.FormatUptime(now - r.Start),
                Idle = GoDuration.FormatUptime(now - r.LastActivity),
                Pending = r.PendingBytes,
                InMsgs = r.InMsgs,
                OutMsgs = r.OutMsgs,
                InBytes = r.InBytes,
                OutBytes = r.OutBytes,
                Subscriptions = r.Subscriptions,
            })],
        };
    }

    public Varz Varz()
    {
        var o = _broker.Options;
        var now = DateTime.UtcNow;
        var totals = _broker.Monitoring.GetTotals();
        using var process = Process.GetCurrentProcess();
        return new Varz
        {
            ServerId = _broker.ServerId,
            ServerName = _broker.ServerName,
            Version = o.NatsServerVersion,
            CourierVersion = Broker.CourierVersion,
            Tags = o.Tags.Count > 0 ? o.Tags : null,
            Proto = 1,
            Go = "courier " + Broker.CourierVersion,
            Host = o.Host,
            Port = _broker.ListenPort,
            AuthRequired = o.AuthRequired,
            MaxConnections = o.MaxConnections,
            MaxSubscriptions = o.MaxSubscriptions,
            PingInterval = o.PingInterval.Ticks * 100, // nanoseconds, as Go's time.Duration
            PingMax = o.MaxPingsOut,
            HttpHost = o.HttpHost ?? o.Host,
            HttpPort = Https ? 0 : HttpListenPort ?? o.HttpPort,
            HttpsPort = o.HttpsPort, // as configured (-1 stays -1), as nats-server reports it
            TlsRequired = o.Tls is not null,
            TlsVerify = o.Tls is { Verify: true },
            TlsTimeout = (o.Tls?.Timeout ?? TlsOptions.DefaultTimeout).TotalSeconds,
            AuthTimeout = o.AuthTimeout.TotalSeconds,
            MaxControlLine = o.MaxControlLine,
            MaxPayload = o.MaxPayload,
            MaxPending = o.MaxPending,
            WriteDeadline = o.WriteDeadline.Ticks * 100,
            Cluster = _broker.Routes is { } table
                ? new VarzCluster
                {
                    Name = table.ClusterName,
                    Host = o.Cluster.Host,
                    Port = _broker.ClusterView.RoutePort,
                    AuthTimeout = o.Cluster.AuthTimeout.TotalSeconds,
                    Urls = o.Cluster.Routes.Count == 0 ? null : [.. o.Cluster.Routes.Select(u => $"{u.Host}:{u.Port}")],
                }
                : new VarzCluster(),
            ConnectUrls = _broker.Routes is null || o.Cluster.NoAdvertise ? null : _broker.ClusterView.ConnectUrls,
            Leaf = LeafVarz(o),
            Gateway = GatewayVarz(o),
            Mqtt = MqttVarz(o.Mqtt),
            Websocket = WebsocketVarz(o.WebSocket),
            HttpReqStats = new Dictionary<string, ulong>(HttpRequests, StringComparer.Ordinal),
            Routes = _broker.Routes?.Routes.Length ?? 0,
            Leafnodes = _broker.Leafs?.Links.Length ?? 0,
            JetStream = o.JetStream
                ? new VarzJetStream { Config = VarzJetStreamConfig.From(o, o.StoreDir ?? "") }
                : null,
            Start = _broker.Started,
            Now = now,
            Uptime = GoDuration.FormatUptime(now - _broker.Started),
            Mem = process.WorkingSet64,
            Cores = Environment.ProcessorCount,
            MaxProcs = Environment.ProcessorCount,
            Connections = _broker.Monitoring.ConnectionCount,
            TotalConnections = _broker.Stats.TotalConnections,
            InMsgs = totals.InMsgs,
            OutMsgs = totals.OutMsgs,
            InBytes = totals.InBytes,
            OutBytes = totals.OutBytes,
            SlowConsumers = _broker.Stats.SlowConsumers,
            Subscriptions = _broker.Monitoring.SubscriptionCount,
            ConfigLoadTime = _configLoadTime,
            SystemAccount = _broker.SystemAccount?.Name,
        };
    }

    // nats-server's MQTTOptsVarz: the block's values as configured (ack_wait and max_ack_pending only when they are
    // not the defaults, which nats-server applies outside its options); empty without a block.
    private VarzMqtt MqttVarz(MqttOptions? mqtt) =>
        mqtt is null || mqtt.Port == 0 ? new VarzMqtt() : new VarzMqtt
        {
            Host = mqtt.Host ?? _broker.Options.Host,
            Port = MqttListenPort ?? mqtt.Port,
            NoAuthUser = mqtt.NoAuthUser,
            AuthTimeout = mqtt.AuthTimeout?.TotalSeconds ?? 0,
            TlsMap = mqtt.Tls is { MapCertificateToUser: true },
            TlsTimeout = (mqtt.Tls?.Timeout ?? TlsOptions.DefaultTimeout).TotalSeconds, // nats-server sets its default with or without TLS
            AckWait = mqtt.AckWait == TimeSpan.FromSeconds(30) ? 0 : mqtt.AckWait.Ticks * 100,
            MaxAckPending = mqtt.MaxAckPending == 1024 ? 0 : mqtt.MaxAckPending,
        };

    // nats-server's WebsocketOptsVarz; empty without a block.
    private VarzWebsocket WebsocketVarz(WebSocketOptions? ws) =>
        ws is null || ws.Port == 0 ? new VarzWebsocket() : new VarzWebsocket
        {
            Host = ws.Host,
            Port = WebSocketListenPort ?? ws.Port,
            NoAuthUser = ws.NoAuthUser,
            JwtCookie = ws.JwtCookie,
            HandshakeTimeout = ws.HandshakeTimeout is { } handshake ? handshake.Ticks * 100 : 0,
            AuthTimeout = ws.AuthTimeout?.TotalSeconds ?? 0,
            NoTls = ws.NoTls,
            TlsMap = ws.Tls is { MapCertificateToUser: true },
            SameOrigin = ws.SameOrigin,
            AllowedOrigins = ws.AllowedOrigins.Count > 0 ? [.. ws.AllowedOrigins] : null,
            Compression = ws.Compression,
        };
}
