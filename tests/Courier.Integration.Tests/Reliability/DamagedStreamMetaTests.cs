using Courier.Integration.Tests.Infrastructure;
using NATS.Client.JetStream;
using NATS.Client.JetStream.Models;

namespace Courier.Integration.Tests.Reliability;

/// <summary>
/// A stream whose configuration file is damaged on disk does not keep the server from starting: as
/// nats-server ("Error recreating stream"), the server logs it, starts without that stream and serves
/// the others. Courier only: nats-server's file is its own (meta.inf with a checksum beside it).
/// </summary>
[Trait("server", "courier")]
public sealed class DamagedStreamMetaTests_Courier(CourierFixture server) : IClassFixture<CourierFixture>
{
    [Fact]
    public async Task A_stream_with_a_damaged_configuration_file_is_skipped_and_the_server_serves_the_others()
    {
        var storeDir = Directory.CreateTempSubdirectory("courier-bad-meta-").FullName;
        using var cts = new CancellationTokenSource(NatsNetClient.TestTimeout * 2);
        try
        {
            await using (var first = await server.StartServerAsync(null, "-js", "-sd", storeDir))
            {
                await using var nats = await NatsNetClient.ConnectAsync(first.Url);
                var js = new NatsJSContext(nats);
                await js.CreateStreamAsync(new StreamConfig("BROKEN", ["broken.>"]) { Storage = StreamConfigStorage.File }, cts.Token);
                await js.CreateStreamAsync(new StreamConfig("WHOLE", ["whole.>"]) { Storage = StreamConfigStorage.File }, cts.Token);
                (await js.PublishAsync("whole.1", "kept", cancellationToken: cts.Token)).EnsureSuccess();
            }

            var meta = Directory.EnumerateFiles(storeDir, "meta.json", SearchOption.AllDirectories)
                .Single(f => Path.GetFileName(Path.GetDirectoryName(f)) == "BROKEN");
            await File.WriteAllTextAsync(meta, "{\"config\":{\"name\":", cts.Token); // cut short, as a torn write leaves it

            await using var restarted = await server.StartServerAsync(null, "-js", "-sd", storeDir);
            await using var client = await NatsNetClient.ConnectAsync(restarted.Url);
            var context = new NatsJSContext(client);
            var whole = await context.GetStreamAsync("WHOLE", cancellationToken: cts.Token);
            Assert.Equal(1L, whole.Info.State.Messages);
            var missing = await Assert.ThrowsAsync<NatsJSApiException>(async () => await context.GetStreamAsync("BROKEN", cancellationToken: cts.Token));
            Assert.Equal(10059, missing.Error.ErrCode);
            Assert.Contains("Error recreating stream", restarted.Diagnostics(200), StringComparison.Ordinal);
        }
        finally
        {
            Directory.Delete(storeDir, recursive: true);
        }
    }
}
