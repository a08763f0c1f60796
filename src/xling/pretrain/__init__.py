"""MLM pretraining with fairseq (paper 3.1, 4.3): command line, fairseq plugin, loader."""
