# scalelab's container image, for running the segments of a divided test
# on Kubernetes (docs/kubernetes.md). Build it from the repository root:
#   docker build -t REGISTRY/scalelab:TAG .
FROM golang:1.26 AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
RUN CGO_ENABLED=0 go build -trimpath -o /out/scalelab ./cmd/scalelab

FROM debian:bookworm-slim
RUN apt-get update && apt-get install -y --no-install-recommends ca-certificates \
    && rm -rf /var/lib/apt/lists/* \
    && useradd --create-home --uid 10001 scalelab
COPY --from=build /out/scalelab /usr/local/bin/scalelab
USER scalelab
WORKDIR /home/scalelab
ENTRYPOINT ["scalelab"]
