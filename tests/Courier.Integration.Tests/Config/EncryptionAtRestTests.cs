using System.Text;
using Courier.Integration.Tests.Infrastructure;
using NATS.Client.JetStream;
using NATS.Client.JetStream.Models;
using NATS.Client.KeyValueStore;

namespace Courier.Integration.Tests.Config;

/// <summary>
/// <c>jetstream { key, cipher }</c>, encryption at rest, through NATS.Net: a stream, a durable consumer and
/// a KV bucket written with a key taken from an environment variable (<c>key: $VAR</c>), the raw files
/// read for the published payloads, and a restart with the same key reading everything back. The same
/// test runs against nats-server 2.9.10, which has encryption at rest since 2.3.
/// </summary>
public abstract class EncryptionAtRestTests<TServer> : IClassFixture<TServer>
    where TServer : ServerFixture
{
    internal const string Secret = "TOPSECRET-7f3a9c";
    internal const string SecretKey = "classifiedkey";

    private readonly TServer _server;

    protected EncryptionAtRestTests(TServer server)
    {
        _server = server;
    }

    /// <summary>Whether subjects must not appear in the files either: nats-server 2.9.10 keeps each block's subjects in a plaintext <c>.fss</c> file.</summary>
    protected abstract bool SubjectsHidden { get; }

    [Theory]
    [InlineData("aes")]
    [InlineData("chachapoly")]
    public async Task Streams_consumers_and_kv_are_unreadable_on_disk_and_come_back_with_the_same_key(string cipher)
    {
        var storeDir = Directory.CreateTempSubdirectory("courier-enc-").FullName;
        var variable = "COURIER_IT_JS_KEY_" + Guid.NewGuid().ToString("N"); // this test's own: tests run in parallel
        Environment.SetEnvironmentVariable(variable, "k3y-" + Guid.NewGuid().ToString("N"));
        var config = $$"""
            jetstream {
              store_dir: "{{storeDir}}"
              key: ${{variable}}
              cipher: {{cipher}}
            }
            """;
        try
        {
            using var cts = new CancellationTokenSource(TimeSpan.FromSeconds(90));
            var ct = cts.Token;
            var p = Subjects.NewPrefix();
            var name = NatsNetClient.NameFor(p);
            await using (var server = await _server.StartServerAsync(config))
            {
                await using var nats = await NatsNetClient.ConnectAsync(server.Url);
                var js = new NatsJSContext(nats);
                await js.CreateStreamAsync(new StreamConfig(name, [$"{p}.>"]), ct);
                for (var i = 0; i < 20; i++)
                {
                    (await js.PublishAsync($"{p}.{SecretKey}.{i % 2}", Encoding.UTF8.GetBytes($"{Secret}-{i}"), cancellationToken: ct)).EnsureSuccess();
                }

                var consumer = await js.CreateOrUpdateConsumerAsync(name, new ConsumerConfig("reader") { AckPolicy = ConsumerConfigAckPolicy.Explicit }, ct);
                var acked = 0;
                await foreach (var msg in consumer.FetchAsync<byte[]>(new NatsJSFetchOpts { MaxMsgs = 5, Expires = TimeSpan.FromSeconds(5) }, cancellationToken: ct))
                {
                    await msg.AckAsync(new AckOpts { DoubleAck = true }, ct);
                    acked++;
                }

                Assert.Equal(5, acked);
                var kv = await new NatsKVContext(js).CreateStoreAsync(new NatsKVConfig(name) { History = 3 }, ct);
                await kv.PutAsync(SecretKey, $"{Secret}-kv", cancellationToken: ct);

                await server.SignalAsync("TERM");
                Assert.NotNull(await server.WaitForExitAsync(TimeSpan.FromSeconds(20)));
            }

            AssertNoPlaintext(storeDir, SubjectsHidden ? [Secret, SecretKey] : [Secret]);

            await using (var server = await _server.StartServerAsync(config))
            {
                await using var nats = await NatsNetClient.ConnectAsync(server.Url);
                var js = new NatsJSContext(nats);
                var stream = await js.GetStreamAsync(name, cancellationToken: ct);
                Assert.Equal(20, stream.Info.State.Messages);
                var last = await stream.GetAsync(new StreamMsgGetRequest { Seq = 20 }, ct);
                Assert.Equal($"{Secret}-19", Encoding.UTF8.GetString(last.Message.Data.Span));

                // The durable consumer goes on after its ack floor.
                var consumer = await js.GetConsumerAsync(name, "reader", ct);
                Assert.Equal(5UL, consumer.Info.AckFloor.StreamSeq);
                await foreach (var msg in consumer.FetchAsync<byte[]>(new NatsJSFetchOpts { MaxMsgs = 1, Expires = TimeSpan.FromSeconds(5) }, cancellationToken: ct))
                {
                    Assert.Equal($"{Secret}-5", Encoding.UTF8.GetString(msg.Data!));
                }

                var kv = await new NatsKVContext(js).GetStoreAsync(name, ct);
                Assert.Equal($"{Secret}-kv", (await kv.GetEntryAsync<string>(SecretKey, cancellationToken: ct)).Value);
            }
        }
        finally
        {
            Environment.SetEnvironmentVariable(variable, null);
            Directory.Delete(storeDir, recursive: true);
        }
    }

    [Fact]
    public async Task A_store_written_without_a_key_is_encrypted_when_the_server_starts_with_one()
    {
        var storeDir = Directory.CreateTempSubdirectory("courier-enc-").FullName;
        var plain = $"jetstream {{\n  store_dir: \"{storeDir}\"\n}}\n";
        var encrypted = $"jetstream {{\n  store_dir: \"{storeDir}\"\n  key: \"later-key\"\n}}\n";
        try
        {
            using var cts = new CancellationTokenSource(TimeSpan.FromSeconds(90));
            var ct = cts.Token;
            var p = Subjects.NewPrefix();
            var name = NatsNetClient.NameFor(p);
            await using (var server = await _server.StartServerAsync(plain))
            {
                await using var nats = await NatsNetClient.ConnectAsync(server.Url);
                var js = new NatsJSContext(nats);
                await js.CreateStreamAsync(new StreamConfig(name, [$"{p}.>"]), ct);
                for (var i = 0; i < 10; i++)
                {
                    (await js.PublishAsync($"{p}.{SecretKey}", Encoding.UTF8.GetBytes($"{Secret}-{i}"), cancellationToken: ct)).EnsureSuccess();
                }

                // A durable consumer's state (Courier: its journal, a FileStore of its own) is converted too.
                var consumer = await js.CreateOrUpdateConsumerAsync(name, new ConsumerConfig("reader") { AckPolicy = ConsumerConfigAckPolicy.Explicit }, ct);
                await foreach (var msg in consumer.FetchAsync<byte[]>(new NatsJSFetchOpts { MaxMsgs = 4, Expires = TimeSpan.FromSeconds(5) }, cancellationToken: ct))
                {
                    await msg.AckAsync(new AckOpts { DoubleAck = true }, ct);
                }

                await server.SignalAsync("TERM");
                Assert.NotNull(await server.WaitForExitAsync(TimeSpan.FromSeconds(20)));
            }

            await using (var server = await _server.StartServerAsync(encrypted))
            {
                await using var nats = await NatsNetClient.ConnectAsync(server.Url);
                var js = new NatsJSContext(nats);
                var stream = await js.GetStreamAsync(name, cancellationToken: ct);
                Assert.Equal(10, stream.Info.State.Messages);
                (await js.PublishAsync($"{p}.{SecretKey}", Encoding.UTF8.GetBytes($"{Secret}-10"), cancellationToken: ct)).EnsureSuccess();
                var first = await stream.GetAsync(new StreamMsgGetRequest { Seq = 1 }, ct);
                Assert.Equal($"{Secret}-0", Encoding.UTF8.GetString(first.Message.Data.Span));
                Assert.Equal(4UL, (await js.GetConsumerAsync(name, "reader", ct)).Info.AckFloor.StreamSeq);
                await server.SignalAsync("TERM");
                Assert.NotNull(await server.WaitForExitAsync(TimeSpan.FromSeconds(20)));
            }

            AssertNoPlaintext(storeDir, SubjectsHidden ? [Secret, SecretKey] : [Secret], minimumFiles: 3);
        }
        finally
        {
            Directory.Delete(storeDir, recursive: true);
        }
    }

    /// <summary>Every file under <paramref name="directory"/> read raw: none holds any of <paramref name="secrets"/>.</summary>
    internal static void AssertNoPlaintext(string directory, IEnumerable<string> secrets, int minimumFiles = 6)
    {
        var files = Directory.GetFiles(directory, "*", SearchOption.AllDirectories);
        Assert.True(files.Length >= minimumFiles, $"expected the stream's, consumer's and bucket's files, found {files.Length}");
        foreach (var file in files)
        {
            var bytes = File.ReadAllBytes(file);
            foreach (var secret in secrets)
            {
                Assert.True(bytes.AsSpan().IndexOf(Encoding.UTF8.GetBytes(secret)) < 0, $"\"{secret}\" in plaintext in {file}");
            }
        }
    }
}

[Trait("server", "nats-server")]
public sealed class EncryptionAtRestTests_NatsServer(NatsServerFixture server) : EncryptionAtRestTests<NatsServerFixture>(server)
{
    protected override bool SubjectsHidden => false;
}

[Trait("server", "courier")]
public sealed class EncryptionAtRestTests_Courier(CourierFixture server) : EncryptionAtRestTests<CourierFixture>(server)
{
    protected override bool SubjectsHidden => true;
}

/// <summary>
/// Encryption at rest where nats-server 2.9.10 differs or lacks the feature, against Courier only: a wrong
/// or missing key stops the start (2.9.10 logs "Error decrypting our stream metafile" and starts without
/// the stream; issue 37 asks for a stop), <c>prev_key</c> (2.10; 2.9.10 refuses the field), and the files
/// of a server without a key, which the check above must be able to tell from encrypted ones.
/// </summary>
[Trait("server", "courier")]
public sealed class EncryptionAtRestKeyTests_Courier(CourierFixture fixture) : IClassFixture<CourierFixture>
{
    private static string Config(string storeDir, string? key, string? previous = null, string cipher = "chachapoly") =>
        $"jetstream {{\n  store_dir: \"{storeDir}\"\n" +
        (key is null ? "" : $"  key: \"{key}\"\n  cipher: {cipher}\n") +
        (previous is null ? "" : $"  prev_key: \"{previous}\"\n") + "}\n";

    /// <summary>A stream with messages and a durable consumer with acks, written by a server on <paramref name="config"/> and stopped.</summary>
    private async Task WriteAsync(string config, string name, string p, CancellationToken ct)
    {
        await using var server = await fixture.StartServerAsync(config);
        await using var nats = await NatsNetClient.ConnectAsync(server.Url);
        var js = new NatsJSContext(nats);
        await js.CreateStreamAsync(new StreamConfig(name, [$"{p}.>"]), ct);
        for (var i = 0; i < 10; i++)
        {
            (await js.PublishAsync($"{p}.{EncryptionAtRestTests<CourierFixture>.SecretKey}", Encoding.UTF8.GetBytes($"{EncryptionAtRestTests<CourierFixture>.Secret}-{i}"), cancellationToken: ct)).EnsureSuccess();
        }

        var consumer = await js.CreateOrUpdateConsumerAsync(name, new ConsumerConfig("reader") { AckPolicy = ConsumerConfigAckPolicy.Explicit }, ct);
        await foreach (var msg in consumer.FetchAsync<byte[]>(new NatsJSFetchOpts { MaxMsgs = 3, Expires = TimeSpan.FromSeconds(5) }, cancellationToken: ct))
        {
            await msg.AckAsync(new AckOpts { DoubleAck = true }, ct);
        }

        await server.SignalAsync("TERM");
        Assert.NotNull(await server.WaitForExitAsync(TimeSpan.FromSeconds(20)));
    }

    private async Task AssertReadableAsync(string config, string name, CancellationToken ct)
    {
        await using var server = await fixture.StartServerAsync(config);
        await using var nats = await NatsNetClient.ConnectAsync(server.Url);
        var js = new NatsJSContext(nats);
        Assert.Equal(10, (await js.GetStreamAsync(name, cancellationToken: ct)).Info.State.Messages);
        Assert.Equal(3UL, (await js.GetConsumerAsync(name, "reader", ct)).Info.AckFloor.StreamSeq);
    }

    [Theory]
    [InlineData("another-key", "Can't start JetStream: Error decrypting our stream metafile: cipher: message authentication failed")]
    [InlineData(null, "Can't start JetStream: Error decrypting our stream metafile: encryption not enabled")]
    public async Task A_wrong_or_missing_key_stops_the_start_with_nats_servers_error(string? key, string error)
    {
        var storeDir = Directory.CreateTempSubdirectory("courier-enc-").FullName;
        try
        {
            using var cts = new CancellationTokenSource(TimeSpan.FromSeconds(90));
            var p = Subjects.NewPrefix();
            var name = NatsNetClient.NameFor(p);
            await WriteAsync(Config(storeDir, "the-right-key"), name, p, cts.Token);

            var (exitCode, lines, _) = await StrictConfigTests<CourierFixture>.StartExpectingExitAsync(fixture.Kind, Config(storeDir, key));
            Assert.Equal(1, exitCode);
            Assert.Contains(lines, l => l.EndsWith(error, StringComparison.Ordinal));

            // The failed starts changed nothing: the right key reads everything.
            await AssertReadableAsync(Config(storeDir, "the-right-key"), name, cts.Token);
        }
        finally
        {
            Directory.Delete(storeDir, recursive: true);
        }
    }

    [Fact]
    public async Task A_prev_key_reads_what_the_old_key_wrote_and_afterwards_the_new_key_alone_does()
    {
        var storeDir = Directory.CreateTempSubdirectory("courier-enc-").FullName;
        try
        {
            using var cts = new CancellationTokenSource(TimeSpan.FromSeconds(120));
            var p = Subjects.NewPrefix();
            var name = NatsNetClient.NameFor(p);
            await WriteAsync(Config(storeDir, "old-key", cipher: "aes"), name, p, cts.Token);

            var (exitCode, _, _) = await StrictConfigTests<CourierFixture>.StartExpectingExitAsync(fixture.Kind, Config(storeDir, "new-key", cipher: "aes"));
            Assert.Equal(1, exitCode); // without prev_key the new key cannot read it

            await AssertReadableAsync(Config(storeDir, "new-key", previous: "old-key", cipher: "aes"), name, cts.Token);
            await AssertReadableAsync(Config(storeDir, "new-key", cipher: "aes"), name, cts.Token);
            EncryptionAtRestTests<CourierFixture>.AssertNoPlaintext(storeDir, [EncryptionAtRestTests<CourierFixture>.Secret, EncryptionAtRestTests<CourierFixture>.SecretKey]);
            (exitCode, _, _) = await StrictConfigTests<CourierFixture>.StartExpectingExitAsync(fixture.Kind, Config(storeDir, "old-key", cipher: "aes"));
            Assert.Equal(1, exitCode); // the old key is retired
        }
        finally
        {
            Directory.Delete(storeDir, recursive: true);
        }
    }

    [Fact]
    public async Task A_reload_that_changes_the_key_is_refused_without_writing_the_key_to_the_log()
    {
        var storeDir = Directory.CreateTempSubdirectory("courier-enc-").FullName;
        try
        {
            await using var server = await fixture.StartServerAsync(Config(storeDir, "first-secret-key"));
            await File.WriteAllTextAsync(Path.Combine(server.Folder, "server.conf"), Config(storeDir, "second-secret-key"));

            await server.SignalAsync("HUP");

            await StrictConfigTests<CourierFixture>.WaitForLogAsync(server, "Failed to reload server configuration: config reload not supported for JetStreamKey");
            Assert.DoesNotContain("secret-key", server.Log.All(), StringComparison.Ordinal);
            Assert.False(server.HasExited, server.Diagnostics());
        }
        finally
        {
            Directory.Delete(storeDir, recursive: true);
        }
    }

    [Fact]
    public async Task Without_a_key_the_payloads_are_in_the_files_so_the_check_can_fail()
    {
        var storeDir = Directory.CreateTempSubdirectory("courier-enc-").FullName;
        try
        {
            using var cts = new CancellationTokenSource(TimeSpan.FromSeconds(90));
            var p = Subjects.NewPrefix();
            await WriteAsync(Config(storeDir, key: null), NatsNetClient.NameFor(p), p, cts.Token);
            Assert.ThrowsAny<Xunit.Sdk.XunitException>(() => EncryptionAtRestTests<CourierFixture>.AssertNoPlaintext(storeDir, [EncryptionAtRestTests<CourierFixture>.Secret]));
        }
        finally
        {
            Directory.Delete(storeDir, recursive: true);
        }
    }
}
